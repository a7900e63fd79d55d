// SPDX-License-Identifier: GPL-2.0-only
#include "tests/fuzz/script.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>

#include "client/return_stream.h"
#include "core/alloc/designs/registry.h"
#include "core/buffer_file.h"
#include "core/completion.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/invariants.h"
#include "core/proc.h"
#include "core/security.h"
#include "core/sync/lock_policy.h"
#include "cused/host/memfd_buffer_file.h"
#include "cused/host/thread_timer.h"
#include "tests/fake_files.h"
#include "tests/fuzz/command_encoder.h"
#include "tests/fuzz/script_input.h"
#include "uapi/binder.h"

namespace cused::fuzz {

using core::Proc;

ScriptWriter& ScriptWriter::raw(const void* data, std::size_t len) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  bytes.insert(bytes.end(), p, p + len);
  return *this;
}

namespace {

constexpr std::size_t kMaxSteps = 400;
// A slot's fake file table (open variant bit 6): fds 0 .. kOpenFds - 1 open, kMaxFds the limit.
constexpr std::uint8_t kWithFiles = 0x40, kCloseRefused = 0x80;
constexpr int kOpenFds = 16, kMaxFds = 24;

// The clients' memory: one arena the script places command streams, parcels and read buffers
// in (never reused within a script, so a parked read's buffer stays valid), plus the clients'
// mappings of their buffer spaces (read-only for senders, S5.6 PTR objects may point there).
// Anything else is EFAULT, as an unmapped address is for a real caller.
class Arena final : public core::UserMemory, public ClientMemory {
 public:
  Arena() : ClientMemory(std::size_t{1} << 20) {}

  const std::byte* at(std::uint64_t addr) const { return reinterpret_cast<const std::byte*>(addr); }
  void add_readable(const Proc* owner, std::uint64_t start, std::size_t len) {
    readable_[owner] = {start, len};
  }
  void remove_readable(const Proc* owner) { readable_.erase(owner); }

  int read(std::uint64_t addr, void* dst, std::size_t len) override {
    if (len == 0) return 0;
    bool ok = in_arena(addr, len);
    for (const auto& [owner, range] : readable_)
      ok = ok || inside(addr, len, range.first, range.second);
    if (!ok) return -EFAULT;
    std::memcpy(dst, at(addr), len);
    return 0;
  }
  int write(std::uint64_t addr, const void* src, std::size_t len) override {
    if (len == 0) return 0;
    if (!in_arena(addr, len)) return -EFAULT;
    std::memcpy(reinterpret_cast<void*>(addr), src, len);
    return 0;
  }

 private:
  static bool inside(std::uint64_t addr, std::size_t len, std::uint64_t start, std::size_t size) {
    return addr >= start && len <= size && addr - start <= size - len;
  }
  bool in_arena(std::uint64_t addr, std::size_t len) const { return contains(addr, len); }

  std::map<const Proc*, std::pair<std::uint64_t, std::size_t>> readable_;
};

constexpr long kCompletedTwice = -9999;

struct CallState {
  bool done = false;
  long result = 0;
  binder_write_read bwr{};
  bool write_read = false;
  core::Completion* completion = nullptr;  // core's, while the call is outstanding
};

class ScriptCompletion final : public core::Completion {
 public:
  ScriptCompletion(std::shared_ptr<CallState> state, Arena& arena,
                   std::shared_ptr<testing::FakeFiles> files)
      : state_(std::move(state)), arena_(arena), files_(std::move(files)) {}
  void complete(long result, std::span<const std::byte> out) override {
    state_->completion = nullptr;
    if (state_->done) state_->result = kCompletedTwice;  // reported by the runner
    state_->done = true;
    if (state_->result != kCompletedTwice) state_->result = result;
    if (state_->write_read && out.size() == sizeof state_->bwr)
      std::memcpy(&state_->bwr, out.data(), out.size());
  }
  core::UserMemory& user_memory() override { return arena_; }
  core::CallerFiles* caller_files() override { return files_.get(); }

 private:
  std::shared_ptr<CallState> state_;
  Arena& arena_;
  std::shared_ptr<testing::FakeFiles> files_;
};

class ScriptMapping final : public core::MappingFinder {
 public:
  ScriptMapping(const core::BufferFile& file, std::size_t space) : file_(file), space_(space) {}
  std::optional<core::ClientMapping> find() override {
    if (space_ == 0) return std::nullopt;
    return core::ClientMapping{reinterpret_cast<std::uint64_t>(file_.data()), space_, false};
  }

 private:
  const core::BufferFile& file_;
  const std::size_t space_;
};

struct Slot {
  std::shared_ptr<Proc> proc;
  pid_t pid = 0;
  client::FollowUps owed;  // delivered buffers, node requests and deaths not yet answered
  std::array<std::shared_ptr<CallState>, kThreads> parked;
  std::shared_ptr<testing::FakeFiles> files;  // null: a FUSE caller
};

// pin_design's choice; set before any script runs.
std::optional<core::alloc::LockVariant> pinned_design;

class Runner {
 public:
  Runner() {
    core::DeviceOptions options;
    options.labels = std::make_shared<core::FixedLabel>("fuzz");
    // The daemon's timer: a freeze with a timeout ends on its thread, as it does in the daemon.
    driver_->set_timer(host::ThreadTimer::shared());
    device_ = std::make_shared<core::Device>("binder", options, driver_);
  }

  Outcome run(std::span<const std::uint8_t> data) {
    ScriptInput in(data);
    while (!in.done() && !full_ && outcome_.steps < kMaxSteps) {
      step(in);
      outcome_.steps++;
      collect_all();
      check_all();
      if (!outcome_.violations.empty()) return std::move(outcome_);
    }
    finish();
    return std::move(outcome_);
  }

 private:
  pid_t tid(const Slot& slot, int thread) const { return slot.pid * 10 + thread; }
  static std::uint64_t mapping(const Slot& slot) {
    return reinterpret_cast<std::uint64_t>(slot.proc->buffers().data());
  }
  Slot* live(std::uint8_t index) {
    Slot& slot = slots_[index % kSlots];
    return slot.proc ? &slot : nullptr;
  }
  // A thread whose ioctl is parked is blocked in the kernel: it issues nothing until woken.
  bool busy(const Slot& slot, int thread) const {
    return slot.parked[thread] && !slot.parked[thread]->done;
  }

  void trace(const std::string& line) const {
    if (trace_) std::fprintf(stderr, "%s\n", line.c_str());
  }

  void violation(std::string what) { outcome_.violations.push_back(std::move(what)); }

  void step(ScriptInput& in) {
    auto op = static_cast<Op>(in.u8() % static_cast<std::uint8_t>(Op::kCount));
    trace(fmt::format("step {}: op {}", outcome_.steps, static_cast<int>(op)));
    switch (op) {
      case Op::kOpen:
        return open(in);
      case Op::kClose:
        if (Slot* slot = live(in.u8())) close(*slot);
        return;
      case Op::kContextMgr:
        return simple(in, BINDER_SET_CONTEXT_MGR);
      case Op::kWriteRead:
        return write_read(in, /*with_commands=*/true);
      case Op::kRead:
        return write_read(in, /*with_commands=*/false);
      case Op::kThreadExit:
        return simple(in, BINDER_THREAD_EXIT);
      case Op::kFlush:
        if (Slot* slot = live(in.u8())) slot->proc->flush();
        return;
      case Op::kInterrupt:
        return interrupt(in);
      case Op::kPoll: {
        Slot* slot = live(in.u8());
        int thread = in.u8() % kThreads;
        if (slot && !busy(*slot, thread)) slot->proc->poll(tid(*slot, thread), nullptr);
        return;
      }
      case Op::kShrink: {
        std::uint8_t pages = in.u8();
        driver_->page_lru().reclaim(pages ? pages : std::numeric_limits<std::size_t>::max());
        return;
      }
      case Op::kUnmap:
        // The kernel's vma close (S1.6, S11.9): later allocations fail, buffers can be freed.
        if (Slot* slot = live(in.u8())) slot->proc->allocator().unmap();
        return;
      case Op::kIoctl:
        return other_ioctl(in);
      case Op::kCount:
        return;
    }
  }

  void open(ScriptInput& in) {
    Slot& slot = slots_[in.u8() % kSlots];
    std::size_t space = kSpaces[in.u8() % kSpaces.size()];
    std::uint8_t variant = in.u8();
    if (slot.proc) return;
    core::DeviceOptions options = device_->options();
    // Two bits pick a registered design (core/alloc/designs/registry.cc): up to four.
    options.alloc.lock = pinned_design ? *pinned_design
                                       : core::alloc::LockVariant::at(static_cast<std::uint8_t>(
                                             (variant & 3) % core::alloc::designs().size()));
    options.alloc.pages =
        (variant & 4) ? core::alloc::PageTableVariant::lazy : core::alloc::PageTableVariant::eager;
    options.defer_complete = !(variant & 8);
    options.lock_policy = sync::kLockPolicies[(variant >> 4) % sync::kLockPolicies.size()];
    device_->set_options(options);
    slot = Slot{};
    slot.pid = next_pid_;
    next_pid_ += 100;
    auto file = host::MemfdBufferFile::create("cused-fuzz", std::max<std::size_t>(space, 4096));
    const core::BufferFile& buffers = *file;
    slot.proc = core::Proc::open(device_, core::OpenerIdentity{slot.pid, slot.pid, 1000},
                                 std::move(file), std::make_unique<ScriptMapping>(buffers, space));
    if (variant & kWithFiles) slot.files = file_table(slot.pid, variant & kCloseRefused);
    if (space)
      arena_.add_readable(slot.proc.get(), reinterpret_cast<std::uint64_t>(buffers.data()), space);
    opened_.push_back(slot.proc);
  }

  std::shared_ptr<testing::FakeFiles> file_table(pid_t pid, bool close_refused) {
    auto files = std::make_shared<testing::FakeFiles>(passed_files_, kMaxFds);
    for (int fd = 0; fd < kOpenFds; fd++) files->open(fmt::format("{}:{}", pid, fd));
    if (close_refused) files->refuse_close();
    return files;
  }

  void close(Slot& slot) {
    trace(fmt::format("  close pid {}", slot.pid));
    slot.proc->release();  // S1.9: wakes and answers every parked read of the proc
    for (auto& call : slot.parked) {
      if (call && !call->done)
        violation(fmt::format("proc {}: a parked read outlived close", slot.pid));
    }
    append(core::InvariantChecker::check_released(*slot.proc));
    arena_.remove_readable(slot.proc.get());
    slot = Slot{};
  }

  std::shared_ptr<CallState> issue(Slot& slot, int thread, unsigned cmd,
                                   std::span<const std::byte> arg, bool nonblock, bool write_read) {
    auto state = std::make_shared<CallState>();
    state->write_read = write_read;
    core::IoctlRequest request;
    request.pid = slot.pid;
    request.tid = tid(slot, thread);
    request.euid = 1000;
    request.cmd = cmd;
    request.arg = arg;
    request.nonblock = nonblock;
    calls_.push_back(state);
    auto completion = std::make_unique<ScriptCompletion>(state, arena_, slot.files);
    state->completion = completion.get();
    slot.proc->ioctl(request, std::move(completion));
    trace(fmt::format("  ioctl {:#x} pid {} tid {}: {}", cmd, slot.pid, request.tid,
                      state->done ? std::to_string(state->result) : "parked"));
    if (state->done)
      parse(slot, *state);
    else
      slot.parked[thread] = state;
    return state;
  }

  void simple(ScriptInput& in, unsigned cmd) {
    Slot* slot = live(in.u8());
    int thread = in.u8() % kThreads;
    if (!slot || busy(*slot, thread)) return;
    std::int32_t zero = 0;
    issue(*slot, thread, cmd, std::as_bytes(std::span(&zero, 1)), false, false);
  }

  void interrupt(ScriptInput& in) {
    Slot* slot = live(in.u8());
    int thread = in.u8() % kThreads;
    if (!slot || !busy(*slot, thread)) return;
    trace(fmt::format("  interrupt pid {} tid {}", slot->pid, tid(*slot, thread)));
    // What the frontend does on FUSE_INTERRUPT (S1.12): the completion is marked, then core told.
    slot->parked[thread]->completion->mark_interrupted();
    slot->proc->interrupt(tid(*slot, thread));
  }

  void other_ioctl(ScriptInput& in) {
    Slot* slot = live(in.u8());
    int thread = in.u8() % kThreads;
    ScriptIoctl call = in.ioctl();
    if (!slot || busy(*slot, thread) || call.cmd == BINDER_WRITE_READ) return;
    issue(*slot, thread, call.cmd, call.argument(), false, false);
  }

  void write_read(ScriptInput& in, bool with_commands) {
    Slot* slot = live(in.u8());
    int thread = in.u8() % kThreads;
    std::uint8_t read_mode = in.u8();
    std::vector<std::byte> commands;
    if (with_commands) {
      int count = in.u8() % 8;
      if (slot) {
        CommandEncoder encoder(arena_, slot->owed, mapping(*slot));
        for (int i = 0; i < count; i++) encoder.command(in, commands);
      }
    }
    if (!slot || busy(*slot, thread)) return;
    std::size_t read_size = fuzz::read_size(read_mode);
    binder_write_read bwr{};
    bwr.write_size = commands.size();
    bwr.write_buffer = arena_.place(commands.data(), commands.size());
    bwr.read_size = read_size;
    bwr.read_buffer = arena_.reserve(read_size);
    if ((commands.size() && !bwr.write_buffer) || (read_size && !bwr.read_buffer)) {
      full_ = true;
      return;
    }
    issue(*slot, thread, BINDER_WRITE_READ, std::as_bytes(std::span(&bwr, 1)), read_mode & 1, true);
  }

  // Reads what a finished BINDER_WRITE_READ returned: buffers to free later, node requests to
  // answer, deaths to acknowledge.
  void parse(Slot& slot, const CallState& call) {
    const binder_write_read& bwr = call.bwr;
    if (!call.write_read || bwr.read_consumed == 0) return;
    if (bwr.read_consumed > bwr.read_size) {
      violation(fmt::format("proc {}: read_consumed {} > read_size {}", slot.pid, bwr.read_consumed,
                            bwr.read_size));
      return;
    }
    std::span<const std::byte> stream(arena_.at(bwr.read_buffer), bwr.read_consumed);
    bool whole = client::for_each_return(stream, [&](const client::ReturnItem& item) {
      trace(fmt::format("  proc {} got BR {:#x}", slot.pid, item.cmd));
      if (slot.owed.record(item)) outcome_.delivered++;
    });
    if (!whole) violation(fmt::format("proc {}: a BR item cut short in the read buffer", slot.pid));
  }

  void collect_all() {
    for (Slot& slot : slots_) {
      for (auto& call : slot.parked) {
        if (call && call->done) {
          parse(slot, *call);
          call.reset();
        }
      }
    }
    for (auto& call : calls_) {
      if (call->done && call->result == kCompletedTwice) violation("a request was completed twice");
    }
    std::erase_if(calls_, [](const auto& call) { return call->done; });
  }

  void append(const core::Violations& found) {
    outcome_.violations.insert(outcome_.violations.end(), found.begin(), found.end());
  }

  void check_all() {
    for (Slot& slot : slots_) {
      if (slot.proc) append(core::InvariantChecker::check(*slot.proc));
    }
    check_passed_files();
  }

  // Between steps no request is inside core, so every PassedFile alive must be one core holds in
  // a buffer record for an undelivered transaction (S5.6, S5.7).
  void check_passed_files() {
    std::size_t held = 0;
    for (const auto& weak : opened_) {
      if (auto proc = weak.lock()) held += core::InvariantChecker::held_files(*proc);
    }
    const long live = passed_files_->load();
    if (live != static_cast<long>(held))
      violation(fmt::format("{} PassedFiles alive but core holds {} (S5.7)", live, held));
  }

  void finish() {
    for (Slot& slot : slots_) {
      if (slot.proc) close(slot);
    }
    for (const auto& call : calls_) {
      if (!call->done) violation("a request was never answered after every proc closed");
    }
    if (driver_->proc_count() != 0)
      violation(fmt::format("{} procs still registered after close", driver_->proc_count()));
    for (const auto& weak : opened_) {
      if (auto proc = weak.lock())
        violation(fmt::format("proc {} still alive after every proc closed: leaked work or refs",
                              proc->pid()));
    }
    if (long live = passed_files_->load())
      violation(fmt::format("{} PassedFiles alive after every proc closed (S5.7)", live));
  }

  Arena arena_;
  testing::PassedFileCount passed_files_ = testing::new_passed_file_count();
  std::shared_ptr<core::Driver> driver_ = std::make_shared<core::Driver>();
  std::shared_ptr<core::Device> device_;
  std::array<Slot, kSlots> slots_;
  std::vector<std::weak_ptr<Proc>> opened_;
  std::vector<std::shared_ptr<CallState>> calls_;
  pid_t next_pid_ = 1000;
  bool full_ = false;
  const bool trace_ = std::getenv("CUSED_FUZZ_TRACE") != nullptr;
  Outcome outcome_;
};

}  // namespace

Outcome run_script(std::span<const std::uint8_t> input) { return Runner().run(input); }

void pin_design(core::alloc::LockVariant lock) { pinned_design = lock; }

}  // namespace cused::fuzz
