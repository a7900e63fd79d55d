// SPDX-License-Identifier: GPL-2.0-only
// The engine at the kernel's cost (issue 30 point 3): a steady-state sync call with its reply, a
// call whose replier defers its completion (TF_DEFER_COMPLETE) and a oneway with its buffer freed
// make no heap allocation in core, as binder.c's hot path makes none beyond its slab caches. This
// executable replaces the global operator new and delete with counting ones; the calls are driven
// through Proc::ioctl with fixed command and read buffers and completions from a fixed pool, so
// every allocation counted is the engine's. Each scenario warms up (the pools and the capacity of
// the engine's containers fill on first use), then counts over kCalls calls and must see none.
// The flows are tests/bench/engine_bench.cc's BM_SyncCall, BM_SyncCallDeferComplete and
// BM_Oneway with a 4-byte payload, on the harness's fakes.
#include <execinfo.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "tests/unit/core/harness.h"

namespace {

// What the replaced operators saw while counting was on, and where the first allocations came
// from (so that a failure names the allocation site, not only the count).
struct Counts {
  std::atomic<bool> on{false};
  std::atomic<std::size_t> allocations{0};
  std::atomic<std::size_t> frees{0};
  static constexpr int kSites = 3, kDepth = 24;
  std::array<std::array<void*, kDepth>, kSites> sites{};
  std::array<int, kSites> depths{};
};
Counts counts;

void note_allocation() {
  if (!counts.on.load(std::memory_order_relaxed)) return;
  const std::size_t index = counts.allocations.fetch_add(1, std::memory_order_relaxed);
  // backtrace() itself only calls malloc (once, to load the unwinder), never operator new.
  if (index < Counts::kSites)
    counts.depths[index] = backtrace(counts.sites[index].data(), Counts::kDepth);
}

void note_free(void* p) {
  if (p && counts.on.load(std::memory_order_relaxed))
    counts.frees.fetch_add(1, std::memory_order_relaxed);
}

void* allocate(std::size_t size) {
  note_allocation();
  return std::malloc(size ? size : 1);
}

void* allocate_aligned(std::size_t size, std::align_val_t align) {
  note_allocation();
  const auto alignment = static_cast<std::size_t>(align);
  // aligned_alloc wants a size that is a multiple of the alignment.
  return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment ?: alignment);
}

void* or_throw(void* p) {
  if (!p) throw std::bad_alloc();
  return p;
}

// Out of line: inlined into operator delete, free() looks to GCC like the wrong partner of new.
__attribute__((noinline)) void release(void* p) {
  note_free(p);
  std::free(p);
}

// The unwinder is loaded before anything is counted.
[[maybe_unused]] const int prime_backtrace = [] {
  void* frame[1];
  return backtrace(frame, 1);
}();

}  // namespace

void* operator new(std::size_t size) { return or_throw(allocate(size)); }
void* operator new[](std::size_t size) { return or_throw(allocate(size)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return allocate(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  return or_throw(allocate_aligned(size, align));
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return or_throw(allocate_aligned(size, align));
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return allocate_aligned(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return allocate_aligned(size, align);
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }

namespace cused::core::test {
namespace {

constexpr int kWarmup = 1000;
constexpr int kCalls = 10000;
constexpr pid_t kSm = 100, kSmLooper = 101, kClient = 200, kClientMain = 201;

// What one BINDER_WRITE_READ answered.
struct Answer {
  bool done = false;
  long result = 0;
  binder_write_read bwr{};
};

// The request of one ioctl. The engine owns it through unique_ptr and deletes it when it answers;
// its storage comes from a fixed pool (class operator new), so the test itself allocates nothing.
class PooledCompletion final : public Completion {
 public:
  PooledCompletion(Answer& answer, const testing::FakeAddressSpace& space)
      : answer_(answer), memory_(space) {}
  void complete(long result, std::span<const std::byte> out) override {
    answer_.done = true;
    answer_.result = result;
    if (out.size() == sizeof answer_.bwr) std::memcpy(&answer_.bwr, out.data(), out.size());
  }
  UserMemory& user_memory() override { return memory_; }

  static void* operator new(std::size_t size);
  static void operator delete(void* p);

 private:
  Answer& answer_;
  testing::FakeUserMemory memory_;
};

// A call parks at most two requests (the caller's and the server's) with a third running.
struct CompletionPool {
  static constexpr std::size_t kSlots = 4;
  alignas(
      PooledCompletion) std::array<std::array<std::byte, sizeof(PooledCompletion)>, kSlots> slots;
  std::array<bool, kSlots> used{};
};
CompletionPool pool;

void* PooledCompletion::operator new(std::size_t size) {
  for (std::size_t i = 0; i < CompletionPool::kSlots && size <= sizeof pool.slots[i]; ++i) {
    if (!pool.used[i]) {
      pool.used[i] = true;
      return pool.slots[i].data();
    }
  }
  throw std::bad_alloc();
}

void PooledCompletion::operator delete(void* p) {
  for (std::size_t i = 0; i < CompletionPool::kSlots; ++i)
    if (pool.slots[i].data() == p) pool.used[i] = false;
}

// A BC_ stream in a fixed buffer.
class CommandBuffer {
 public:
  CommandBuffer& u32(std::uint32_t value) { return raw(&value, sizeof value); }
  CommandBuffer& free_buffer(binder_uintptr_t buffer) {
    u32(BC_FREE_BUFFER);
    return raw(&buffer, sizeof buffer);
  }
  CommandBuffer& transaction(std::uint32_t cmd, std::uint32_t flags, const void* data,
                             std::size_t len) {
    binder_transaction_data tr{};
    tr.code = 1;
    tr.flags = flags;
    tr.data_size = len;
    tr.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(data);
    u32(cmd);
    return raw(&tr, sizeof tr);
  }
  void clear() { len_ = 0; }
  const std::byte* data() const { return bytes_.data(); }
  std::size_t size() const { return len_; }

 private:
  CommandBuffer& raw(const void* data, std::size_t len) {
    std::memcpy(bytes_.data() + len_, data, len);
    len_ += len;
    return *this;
  }
  std::array<std::byte, 256> bytes_;
  std::size_t len_ = 0;
};

// One binder thread of a client, driving Proc::ioctl itself: its commands and read buffer are
// fixed arrays, read back in place.
class Side {
 public:
  Side(Client& client, pid_t tid, const testing::FakeAddressSpace& space)
      : client_(client), tid_(tid), space_(space) {}

  CommandBuffer& commands() { return commands_; }
  const Answer& answer() const { return answer_; }

  // BINDER_WRITE_READ of the commands gathered, with the whole read buffer.
  void write_read() {
    answer_ = {};
    binder_write_read bwr{};
    bwr.write_size = commands_.size();
    bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(commands_.data());
    bwr.read_size = read_.size();
    bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(read_.data());
    IoctlRequest request;
    request.pid = client_.pid();
    request.tid = tid_;
    request.euid = 1000;
    request.cmd = BINDER_WRITE_READ;
    request.arg = std::as_bytes(std::span<const binder_write_read, 1>(&bwr, 1));
    client_.proc().ioctl(request, std::make_unique<PooledCompletion>(answer_, space_));
    commands_.clear();
  }

  // The read ended without error and returned exactly `expected` (BR_NOOP first); the buffer of
  // its transaction or reply, if it had one, in `buffer`.
  bool returned(std::initializer_list<std::uint32_t> expected, binder_uintptr_t& buffer) const {
    if (!answer_.done || answer_.result != 0) return false;
    std::size_t pos = 0;
    for (std::uint32_t want : expected) {
      std::uint32_t cmd;
      if (pos + sizeof cmd > answer_.bwr.read_consumed) return false;
      std::memcpy(&cmd, read_.data() + pos, sizeof cmd);
      pos += sizeof cmd;
      if (cmd != want) return false;
      if (cmd == BR_TRANSACTION || cmd == BR_REPLY) {
        binder_transaction_data tr;
        std::memcpy(&tr, read_.data() + pos, sizeof tr);
        buffer = tr.data.ptr.buffer;
      }
      pos += _IOC_SIZE(cmd);
    }
    return pos == answer_.bwr.read_consumed;
  }

 private:
  Client& client_;
  const pid_t tid_;
  const testing::FakeAddressSpace& space_;
  CommandBuffer commands_;
  std::array<std::byte, 256> read_{};
  Answer answer_;
};

// A context manager looping on one thread and a client calling it, as engine_bench's Pair.
class AllocationCountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sm_client.ioctl(kSmLooper, BINDER_SET_CONTEXT_MGR), 0);
    binder_version version{};
    ASSERT_EQ(sm_client.ioctl(kSmLooper, BINDER_VERSION, version), 0);
    ASSERT_EQ(client_client.ioctl(kClientMain, BINDER_VERSION, version), 0);
    sm.commands().u32(BC_ENTER_LOOPER);
    sm.write_read();
    ASSERT_FALSE(sm.answer().done) << "the looper waits for work";
  }

  // Runs `call` kWarmup times, then kCalls times counting; each run returns whether the call
  // answered as it should. Prints the count per call, and expects no allocation and no free.
  template <typename Call>
  void expect_no_allocation(const char* what, Call&& call) {
    int failed = 0;
    for (int i = 0; i < kWarmup; ++i) failed += !call();
    ASSERT_EQ(failed, 0) << what << ": the call did not answer as expected while warming up";
    counts.allocations = 0;
    counts.frees = 0;
    counts.on = true;
    for (int i = 0; i < kCalls; ++i) failed += !call();
    counts.on = false;
    const std::size_t allocations = counts.allocations, frees = counts.frees;
    std::printf("[ allocations ] %s: %zu allocations, %zu frees over %d calls (%.3f per call)\n",
                what, allocations, frees, kCalls, static_cast<double>(allocations) / kCalls);
    EXPECT_EQ(failed, 0) << what << ": calls that did not answer as expected";
    EXPECT_EQ(allocations, 0u) << what << ": the first allocation sites follow on stderr";
    EXPECT_EQ(frees, 0u) << what;
    for (std::size_t i = 0; i < std::min<std::size_t>(allocations, Counts::kSites); ++i) {
      std::fprintf(stderr, "allocation %zu:\n", i + 1);
      backtrace_symbols_fd(counts.sites[i].data(), counts.depths[i], STDERR_FILENO);
    }
  }

  Env env;
  Client sm_client{env, kSm};
  Client client_client{env, kClient};
  Side sm{sm_client, kSmLooper, env.address_space};
  Side client{client_client, kClientMain, env.address_space};
  const std::array<std::byte, 4> payload{};
  binder_uintptr_t reply_buffer = 0;  // freed with the client's next call, as libbinder does
};

// S3.6 "sync call OK": the call parks the caller, the manager's read takes it and replies;
// legacy flow, three ioctls (the call, the reply, the manager's next read).
TEST_F(AllocationCountTest, SyncCallWithReplyAllocatesNothing_S3_6) {
  expect_no_allocation("sync call with reply", [&] {
    if (reply_buffer) client.commands().free_buffer(reply_buffer);
    client.commands().transaction(BC_TRANSACTION, 0, payload.data(), payload.size());
    client.write_read();
    binder_uintptr_t incoming = 0;
    if (client.answer().done || !sm.returned({BR_NOOP, BR_TRANSACTION}, incoming)) return false;
    sm.commands().free_buffer(incoming).transaction(BC_REPLY, 0, payload.data(), payload.size());
    sm.write_read();
    binder_uintptr_t none = 0;
    if (!sm.returned({BR_NOOP, BR_TRANSACTION_COMPLETE}, none)) return false;
    if (!client.returned({BR_NOOP, BR_TRANSACTION_COMPLETE, BR_REPLY}, reply_buffer)) return false;
    sm.write_read();
    return !sm.answer().done;
  });
}

// S3.5 with TF_DEFER_COMPLETE: the reply's own ioctl goes on to wait, its completion comes with
// the next call (two ioctls per call).
TEST_F(AllocationCountTest, DeferredCompleteCallAllocatesNothing_S3_5) {
  bool first = true;
  expect_no_allocation("call with deferred completion", [&] {
    if (reply_buffer) client.commands().free_buffer(reply_buffer);
    client.commands().transaction(BC_TRANSACTION, 0, payload.data(), payload.size());
    client.write_read();
    binder_uintptr_t incoming = 0;
    const bool served =
        first ? sm.returned({BR_NOOP, BR_TRANSACTION}, incoming)
              : sm.returned({BR_NOOP, BR_TRANSACTION_COMPLETE, BR_TRANSACTION}, incoming);
    first = false;
    if (client.answer().done || !served) return false;
    sm.commands().free_buffer(incoming).transaction(BC_REPLY, uapi::TF_DEFER_COMPLETE,
                                                    payload.data(), payload.size());
    sm.write_read();
    return !sm.answer().done &&
           client.returned({BR_NOOP, BR_TRANSACTION_COMPLETE, BR_REPLY}, reply_buffer);
  });
}

// S3.6 "oneway OK": the sender hears its completion at once, the manager reads the oneway and
// frees its buffer (S4.5: which lets the node's next oneway through).
TEST_F(AllocationCountTest, OnewayWithBufferFreedAllocatesNothing_S3_6) {
  expect_no_allocation("oneway, buffer freed", [&] {
    client.commands().transaction(BC_TRANSACTION, TF_ONE_WAY, payload.data(), payload.size());
    client.write_read();
    binder_uintptr_t none = 0, incoming = 0;
    if (!client.returned({BR_NOOP, BR_TRANSACTION_COMPLETE}, none) ||
        !sm.returned({BR_NOOP, BR_TRANSACTION}, incoming))
      return false;
    sm.commands().free_buffer(incoming);
    sm.write_read();
    return !sm.answer().done;
  });
}

}  // namespace
}  // namespace cused::core::test
