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
#include "core/buffer_file.h"
#include "core/completion.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/invariants.h"
#include "core/proc.h"
#include "core/security.h"
#include "core/sync/lock_policy.h"
#include "tests/fake_files.h"
#include "uapi/binder.h"

namespace cused::fuzz {

using core::Proc;

ScriptWriter& ScriptWriter::raw(const void* data, std::size_t len) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  bytes.insert(bytes.end(), p, p + len);
  return *this;
}

namespace {

// Buffer space sizes a script can open with; 0: the client never maps (S1.7).
constexpr std::array<std::size_t, 6> kSpaces = {0,        4096,      2 * 4096,
                                                4 * 4096, 16 * 4096, (1u << 20) - 2 * 4096};
constexpr std::array<unsigned, 11> kIoctls = {BINDER_VERSION,
                                              BINDER_SET_MAX_THREADS,
                                              BINDER_GET_NODE_DEBUG_INFO,
                                              BINDER_GET_NODE_INFO_FOR_REF,
                                              BINDER_ENABLE_ONEWAY_SPAM_DETECTION,
                                              BINDER_GET_EXTENDED_ERROR,
                                              BINDER_SET_IDLE_TIMEOUT,
                                              BINDER_SET_IDLE_PRIORITY,
                                              BINDER_FREEZE,
                                              BINDER_GET_FROZEN_INFO,
                                              BINDER_SET_CONTEXT_MGR_EXT};
constexpr std::size_t kMaxSteps = 400;
// A slot's fake file table (open variant bit 6): fds 0 .. kOpenFds - 1 open, kMaxFds the limit.
constexpr std::uint8_t kWithFiles = 0x40, kCloseRefused = 0x80;
constexpr int kOpenFds = 16, kMaxFds = 24;
constexpr std::uint64_t kBogusAddress = 0xdead0000;

// The script bytes; past the end every read is zero, so any input is a complete script.
class Input {
 public:
  explicit Input(std::span<const std::uint8_t> data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  std::uint8_t u8() { return pos_ < data_.size() ? data_[pos_++] : 0; }
  template <typename T>
  T value() {
    T out{};
    bytes(&out, sizeof out);
    return out;
  }
  void bytes(void* dst, std::size_t len) {
    std::size_t n = std::min(len, data_.size() - std::min(pos_, data_.size()));
    if (len) std::memset(dst, 0, len);
    if (n) std::memcpy(dst, data_.data() + pos_, n);
    pos_ += n;
  }

 private:
  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
};

// The clients' memory: one arena the script places command streams, parcels and read buffers
// in (never reused within a script, so a parked read's buffer stays valid), plus the clients'
// mappings of their buffer spaces (read-only for senders, S5.6 PTR objects may point there).
// Anything else is EFAULT, as an unmapped address is for a real caller.
class Arena final : public core::UserMemory {
 public:
  Arena() : memory_(std::size_t{1} << 20) {}

  // `len` bytes in the arena, 8-aligned; 0 when it is full (the script stops).
  std::uint64_t place(const void* data, std::size_t len) {
    std::size_t at = (used_ + 7) & ~std::size_t{7};
    if (at + len > memory_.size()) return 0;
    if (len) std::memcpy(memory_.data() + at, data, len);
    used_ = at + len;
    return reinterpret_cast<std::uint64_t>(memory_.data() + at);
  }
  std::uint64_t reserve(std::size_t len) {
    std::vector<std::byte> zeros(len);
    return place(zeros.data(), len);
  }
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
  bool in_arena(std::uint64_t addr, std::size_t len) const {
    return inside(addr, len, reinterpret_cast<std::uint64_t>(memory_.data()), memory_.size());
  }

  std::vector<std::byte> memory_;
  std::size_t used_ = 0;
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

class Runner {
 public:
  Runner() {
    core::DeviceOptions options;
    options.labels = std::make_shared<core::FixedLabel>("fuzz");
    device_ = std::make_shared<core::Device>("binder", options, driver_);
  }

  Outcome run(std::span<const std::uint8_t> data) {
    Input in(data);
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

  void step(Input& in) {
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

  void open(Input& in) {
    Slot& slot = slots_[in.u8() % kSlots];
    std::size_t space = kSpaces[in.u8() % kSpaces.size()];
    std::uint8_t variant = in.u8();
    if (slot.proc) return;
    core::DeviceOptions options = device_->options();
    options.alloc.lock = static_cast<core::alloc::LockVariant>((variant & 3) % 3);
    options.alloc.pages =
        (variant & 4) ? core::alloc::PageTableVariant::lazy : core::alloc::PageTableVariant::eager;
    options.defer_complete = !(variant & 8);
    options.lock_policy = sync::kLockPolicies[(variant >> 4) % sync::kLockPolicies.size()];
    device_->set_options(options);
    slot = Slot{};
    slot.pid = next_pid_;
    next_pid_ += 100;
    auto file = core::BufferFile::create("cused-fuzz", std::max<std::size_t>(space, 4096));
    const core::BufferFile& buffers = *file;
    slot.proc = device_->open(core::OpenerIdentity{slot.pid, slot.pid, 1000}, std::move(file),
                              std::make_unique<ScriptMapping>(buffers, space));
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

  void simple(Input& in, unsigned cmd) {
    Slot* slot = live(in.u8());
    int thread = in.u8() % kThreads;
    if (!slot || busy(*slot, thread)) return;
    std::int32_t zero = 0;
    issue(*slot, thread, cmd, std::as_bytes(std::span(&zero, 1)), false, false);
  }

  void interrupt(Input& in) {
    Slot* slot = live(in.u8());
    int thread = in.u8() % kThreads;
    if (!slot || !busy(*slot, thread)) return;
    trace(fmt::format("  interrupt pid {} tid {}", slot->pid, tid(*slot, thread)));
    // What the frontend does on FUSE_INTERRUPT (S1.12): the completion is marked, then core told.
    slot->parked[thread]->completion->mark_interrupted();
    slot->proc->interrupt(tid(*slot, thread));
  }

  void other_ioctl(Input& in) {
    Slot* slot = live(in.u8());
    int thread = in.u8() % kThreads;
    std::uint8_t which = in.u8();
    unsigned cmd = which < 0xf0 ? kIoctls[which % kIoctls.size()] : in.value<std::uint32_t>();
    std::array<std::byte, 256> arg{};
    std::size_t size = std::min<std::size_t>(_IOC_SIZE(cmd), arg.size());
    in.bytes(arg.data(), size);
    if (!slot || busy(*slot, thread) || cmd == BINDER_WRITE_READ) return;
    issue(*slot, thread, cmd, std::span(arg.data(), size), false, false);
  }

  void write_read(Input& in, bool with_commands) {
    Slot* slot = live(in.u8());
    int thread = in.u8() % kThreads;
    std::uint8_t read_mode = in.u8();
    std::vector<std::byte> commands;
    if (with_commands) {
      int count = in.u8() % 8;
      for (int i = 0; i < count && slot; i++) command(in, *slot, commands);
    }
    if (!slot || busy(*slot, thread)) return;
    std::size_t read_size = (read_mode & 4) ? 0 : (read_mode & 2) ? 8 + (read_mode >> 3) : 512;
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

  template <typename T>
  static void put(std::vector<std::byte>& out, const T& value) {
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    out.insert(out.end(), p, p + sizeof value);
  }

  static std::uint32_t handle_from(Input& in) {
    std::uint8_t h = in.u8();
    return h < 0xf0 ? h % 6 : in.value<std::uint32_t>();
  }

  void command(Input& in, Slot& slot, std::vector<std::byte>& out) {
    auto kind = static_cast<Cmd>(in.u8() % static_cast<std::uint8_t>(Cmd::kCount));
    switch (kind) {
      case Cmd::kTransaction:
        return transaction(in, slot, out);
      case Cmd::kFreeBuffer: {
        std::uint8_t index = in.u8();
        std::uint64_t address;
        if (index >= 0xf0) {
          address = in.value<std::uint64_t>();
        } else if (!slot.owed.buffers.empty()) {
          auto it = slot.owed.buffers.begin() + index % slot.owed.buffers.size();
          address = *it;
          slot.owed.buffers.erase(it);
        } else {
          address = 0;  // nothing delivered: a bogus free (S9.9)
        }
        put(out, BC_FREE_BUFFER);
        return put(out, address);
      }
      case Cmd::kRefcount: {
        std::uint32_t cmd = BC_INCREFS + (in.u8() % 4);
        put(out, cmd);
        return put(out, handle_from(in));
      }
      case Cmd::kRefDone: {
        bool acquire = in.u8() & 1;
        std::uint8_t index = in.u8();
        auto& pending = acquire ? slot.owed.acquires : slot.owed.increfs;
        binder_ptr_cookie pc{};
        if (index == 0xff) {
          pc = in.value<binder_ptr_cookie>();
        } else if (!pending.empty()) {
          pc = pending.front();
          pending.pop_front();
        }
        put(out, acquire ? BC_ACQUIRE_DONE : BC_INCREFS_DONE);
        return put(out, pc);
      }
      case Cmd::kLooper:
        return put(out, static_cast<std::uint32_t>(BC_REGISTER_LOOPER + in.u8() % 3));
      case Cmd::kDeath: {
        bool clear = in.u8() & 1;
        binder_handle_cookie hc{handle_from(in), in.u8() % 4u};
        put(out, clear ? BC_CLEAR_DEATH_NOTIFICATION : BC_REQUEST_DEATH_NOTIFICATION);
        return put(out, hc);
      }
      case Cmd::kDeadBinderDone: {
        std::uint8_t index = in.u8();
        binder_uintptr_t cookie;
        if (index == 0xff) {
          cookie = in.u8() % 4;
        } else if (!slot.owed.deaths.empty()) {
          cookie = slot.owed.deaths.front();
          slot.owed.deaths.pop_front();
        } else {
          cookie = index % 4;
        }
        put(out, BC_DEAD_BINDER_DONE);
        return put(out, cookie);
      }
      case Cmd::kFreeze: {
        std::uint8_t which = in.u8() % 3;
        binder_handle_cookie hc{handle_from(in), in.u8() % 4u};
        if (which == 2) {
          put(out, uapi::BC_FREEZE_NOTIFICATION_DONE);
          binder_uintptr_t cookie = hc.cookie;  // the struct is packed: no reference into it
          return put(out, cookie);
        }
        put(out, which ? uapi::BC_CLEAR_FREEZE_NOTIFICATION : uapi::BC_REQUEST_FREEZE_NOTIFICATION);
        return put(out, hc);
      }
      case Cmd::kRaw: {
        put(out, in.value<std::uint32_t>());
        std::array<std::byte, 64> raw{};
        std::size_t len = in.u8() % raw.size();
        in.bytes(raw.data(), len);
        out.insert(out.end(), raw.begin(), raw.begin() + len);
        return;
      }
      case Cmd::kCount:
        return;
    }
  }

  // One object of a parcel; `data` and `offsets` grow.
  void object(Input& in, Slot& slot, std::vector<std::byte>& data,
              std::vector<binder_size_t>& offsets) {
    auto kind = static_cast<Obj>(in.u8() % static_cast<std::uint8_t>(Obj::kCount));
    auto add = [&](const auto& obj) {
      offsets.push_back(data.size());
      put(data, obj);
    };
    switch (kind) {
      case Obj::kBinder:
      case Obj::kWeakBinder: {
        flat_binder_object obj{};
        obj.hdr.type = kind == Obj::kBinder ? BINDER_TYPE_BINDER : BINDER_TYPE_WEAK_BINDER;
        obj.binder = 0x1000 * (1 + in.u8() % 4);
        obj.cookie = in.u8();
        if (kind == Obj::kBinder) obj.flags = in.value<std::uint16_t>();
        return add(obj);
      }
      case Obj::kHandle:
      case Obj::kWeakHandle: {
        flat_binder_object obj{};
        obj.hdr.type = kind == Obj::kHandle ? BINDER_TYPE_HANDLE : BINDER_TYPE_WEAK_HANDLE;
        obj.handle = handle_from(in);
        return add(obj);
      }
      case Obj::kFd: {
        binder_fd_object obj{};
        obj.hdr.type = BINDER_TYPE_FD;
        obj.fd = in.u8();
        return add(obj);
      }
      case Obj::kFda: {
        binder_fd_array_object obj{};
        obj.hdr.type = BINDER_TYPE_FDA;
        obj.num_fds = in.u8() % 4;
        obj.parent = in.u8() % 4;
        obj.parent_offset = in.u8();
        return add(obj);
      }
      case Obj::kPtr: {
        binder_buffer_object obj{};
        obj.hdr.type = BINDER_TYPE_PTR;
        std::uint8_t where = in.u8() % 3;
        obj.length = 8 * std::size_t{in.u8()};
        obj.buffer = where == 0   ? arena_.reserve(obj.length)
                     : where == 1 ? kBogusAddress
                                  : reinterpret_cast<std::uint64_t>(slot.proc->buffers().data());
        std::uint8_t parent = in.u8();
        obj.flags = (parent & 0x80) ? BINDER_BUFFER_FLAG_HAS_PARENT : 0;
        obj.parent = parent % 4;
        obj.parent_offset = in.u8();
        return add(obj);
      }
      case Obj::kGarbage:
        put(data, std::uint64_t{0x6161616161616161});
        offsets.push_back(in.u8());
        return;
      case Obj::kCount:
        return;
    }
  }

  void transaction(Input& in, Slot& slot, std::vector<std::byte>& out) {
    std::uint8_t mode = in.u8();
    binder_transaction_data tr{};
    tr.target.handle = handle_from(in);
    tr.code = in.u8();
    tr.flags = in.u8();
    std::vector<std::byte> data(in.u8() % 64);
    in.bytes(data.data(), data.size());
    data.resize((data.size() + 7) & ~std::size_t{7});
    int objects = in.u8() % 5;
    auto damage = static_cast<Damage>(in.u8() % static_cast<std::uint8_t>(Damage::kCount));
    std::vector<binder_size_t> offsets;
    for (int i = 0; i < objects; i++) object(in, slot, data, offsets);
    switch (damage) {
      case Damage::kMisaligned:
        if (!offsets.empty()) offsets[0] += 1 + in.u8() % 7;
        break;
      case Damage::kPastEnd:
        offsets.push_back(data.size() + 8 * (in.u8() % 4));
        break;
      case Damage::kDescending:
        std::reverse(offsets.begin(), offsets.end());
        break;
      default:
        break;
    }
    tr.data_size = data.size();
    tr.offsets_size = offsets.size() * sizeof(binder_size_t);
    tr.data.ptr.buffer = arena_.place(data.data(), data.size());
    tr.data.ptr.offsets = arena_.place(offsets.data(), tr.offsets_size);
    if (damage == Damage::kOddOffsetsSize)
      tr.offsets_size = tr.offsets_size ? tr.offsets_size - 4 : 4;
    if (damage == Damage::kBadDataPointer) tr.data.ptr.buffer = kBogusAddress;
    if (damage == Damage::kHugeSizes) tr.data_size = ~binder_size_t{0} - 7;
    bool reply = mode & kTxnReply, sg = mode & kTxnSg;
    if (sg) {
      binder_transaction_data_sg tr_sg{tr, 8 * binder_size_t{in.u8()}};
      put(out, reply ? BC_REPLY_SG : BC_TRANSACTION_SG);
      return put(out, tr_sg);
    }
    put(out, reply ? BC_REPLY : BC_TRANSACTION);
    put(out, tr);
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

}  // namespace cused::fuzz
