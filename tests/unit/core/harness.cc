// SPDX-License-Identifier: GPL-2.0-only
#include "tests/unit/core/harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "tests/unit/fake_buffer_file.h"

namespace cused::core::test {

namespace {

template <typename T>
T payload_as(const std::vector<std::byte>& payload) {
  T value{};
  EXPECT_GE(payload.size(), sizeof value);
  std::memcpy(&value, payload.data(), std::min(sizeof value, payload.size()));
  return value;
}

}  // namespace

binder_transaction_data Br::tr() const { return payload_as<binder_transaction_data>(payload); }
binder_transaction_data_secctx Br::tr_secctx() const {
  return payload_as<binder_transaction_data_secctx>(payload);
}
binder_ptr_cookie Br::ptr_cookie() const { return payload_as<binder_ptr_cookie>(payload); }
binder_uintptr_t Br::cookie() const { return payload_as<binder_uintptr_t>(payload); }

std::string br_name(std::uint32_t cmd) {
  static const std::map<std::uint32_t, std::string> names = {
      {BR_ERROR, "BR_ERROR"},
      {BR_OK, "BR_OK"},
      {BR_TRANSACTION, "BR_TRANSACTION"},
      {BR_TRANSACTION_SEC_CTX, "BR_TRANSACTION_SEC_CTX"},
      {BR_REPLY, "BR_REPLY"},
      {BR_DEAD_REPLY, "BR_DEAD_REPLY"},
      {BR_TRANSACTION_COMPLETE, "BR_TRANSACTION_COMPLETE"},
      {BR_INCREFS, "BR_INCREFS"},
      {BR_ACQUIRE, "BR_ACQUIRE"},
      {BR_RELEASE, "BR_RELEASE"},
      {BR_DECREFS, "BR_DECREFS"},
      {BR_NOOP, "BR_NOOP"},
      {BR_SPAWN_LOOPER, "BR_SPAWN_LOOPER"},
      {BR_DEAD_BINDER, "BR_DEAD_BINDER"},
      {BR_CLEAR_DEATH_NOTIFICATION_DONE, "BR_CLEAR_DEATH_NOTIFICATION_DONE"},
      {BR_FAILED_REPLY, "BR_FAILED_REPLY"},
      {BR_FROZEN_REPLY, "BR_FROZEN_REPLY"},
      {BR_ONEWAY_SPAM_SUSPECT, "BR_ONEWAY_SPAM_SUSPECT"},
      {uapi::BR_TRANSACTION_PENDING_FROZEN, "BR_TRANSACTION_PENDING_FROZEN"},
      {uapi::BR_FROZEN_BINDER, "BR_FROZEN_BINDER"},
      {uapi::BR_CLEAR_FREEZE_NOTIFICATION_DONE, "BR_CLEAR_FREEZE_NOTIFICATION_DONE"},
  };
  auto it = names.find(cmd);
  return it == names.end() ? "BR_?" + std::to_string(cmd) : it->second;
}

std::string names(const std::vector<Br>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ' ';
    out += br_name(item.cmd);
  }
  return out;
}

Parcel& Parcel::raw(const void* bytes, std::size_t len) {
  const auto* p = static_cast<const std::byte*>(bytes);
  data.insert(data.end(), p, p + len);
  return *this;
}

Parcel& Parcel::binder(binder_uintptr_t ptr, binder_uintptr_t cookie, std::uint32_t flags) {
  flat_binder_object obj{};
  obj.hdr.type = BINDER_TYPE_BINDER;
  obj.flags = flags;
  obj.binder = ptr;
  obj.cookie = cookie;
  return object(obj);
}

Parcel& Parcel::weak_binder(binder_uintptr_t ptr, binder_uintptr_t cookie) {
  flat_binder_object obj{};
  obj.hdr.type = BINDER_TYPE_WEAK_BINDER;
  obj.binder = ptr;
  obj.cookie = cookie;
  return object(obj);
}

Parcel& Parcel::handle(std::uint32_t handle) {
  flat_binder_object obj{};
  obj.hdr.type = BINDER_TYPE_HANDLE;
  obj.handle = handle;
  return object(obj);
}

Parcel& Parcel::weak_handle(std::uint32_t handle) {
  flat_binder_object obj{};
  obj.hdr.type = BINDER_TYPE_WEAK_HANDLE;
  obj.handle = handle;
  return object(obj);
}

Parcel& Parcel::fd(int fd) {
  binder_fd_object obj{};
  obj.hdr.type = BINDER_TYPE_FD;
  obj.fd = static_cast<__u32>(fd);
  return object(obj);
}

Parcel& Parcel::fda(binder_size_t num_fds, binder_size_t parent, binder_size_t parent_offset) {
  binder_fd_array_object obj{};
  obj.hdr.type = BINDER_TYPE_FDA;
  obj.num_fds = num_fds;
  obj.parent = parent;
  obj.parent_offset = parent_offset;
  return object(obj);
}

Parcel& Parcel::ptr(const void* buffer, binder_size_t length, std::optional<binder_size_t> parent,
                    binder_size_t parent_offset) {
  binder_buffer_object obj{};
  obj.hdr.type = BINDER_TYPE_PTR;
  obj.flags = parent ? BINDER_BUFFER_FLAG_HAS_PARENT : 0;
  obj.buffer = reinterpret_cast<binder_uintptr_t>(buffer);
  obj.length = length;
  obj.parent = parent.value_or(0);
  obj.parent_offset = parent_offset;
  return object(obj);
}

Commands& Commands::raw(const void* data, std::size_t len) {
  const auto* p = static_cast<const std::byte*>(data);
  bytes.insert(bytes.end(), p, p + len);
  return *this;
}

binder_transaction_data Commands::describe(std::uint32_t handle, std::uint32_t code,
                                           std::uint32_t flags, const Parcel& parcel) {
  const Parcel& kept = kept_.emplace_back(parcel);
  binder_transaction_data tr{};
  tr.target.handle = handle;
  tr.code = code;
  tr.flags = flags;
  tr.data_size = kept.data.size();
  tr.offsets_size = kept.offsets.size() * sizeof(binder_size_t);
  tr.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(kept.data.data());
  tr.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(kept.offsets.data());
  return tr;
}

Commands& Commands::transaction(std::uint32_t handle, std::uint32_t code, std::uint32_t flags,
                                const Parcel& parcel) {
  return transaction_raw(BC_TRANSACTION, describe(handle, code, flags, parcel));
}

Commands& Commands::transaction_sg(std::uint32_t handle, std::uint32_t code, std::uint32_t flags,
                                   const Parcel& parcel, binder_size_t buffers_size) {
  binder_transaction_data_sg sg{describe(handle, code, flags, parcel), buffers_size};
  return u32(BC_TRANSACTION_SG).raw(&sg, sizeof sg);
}

Commands& Commands::reply(std::uint32_t flags, const Parcel& parcel) {
  return transaction_raw(BC_REPLY, describe(0, 0, flags, parcel));
}

Commands& Commands::reply_sg(std::uint32_t flags, const Parcel& parcel,
                             binder_size_t buffers_size) {
  binder_transaction_data_sg sg{describe(0, 0, flags, parcel), buffers_size};
  return u32(BC_REPLY_SG).raw(&sg, sizeof sg);
}

Commands& Commands::transaction_raw(std::uint32_t cmd, const binder_transaction_data& tr) {
  return u32(cmd).raw(&tr, sizeof tr);
}

Commands& Commands::reply_raw_from(const void* data, std::size_t len, std::uint32_t flags) {
  binder_transaction_data tr{};
  tr.flags = flags;
  tr.data_size = len;
  tr.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(data);
  return transaction_raw(BC_REPLY, tr);
}

Commands& Commands::done(std::uint32_t cmd, binder_uintptr_t ptr, binder_uintptr_t cookie) {
  binder_ptr_cookie pc{ptr, cookie};
  return u32(cmd).raw(&pc, sizeof pc);
}

Commands& Commands::death(std::uint32_t cmd, std::uint32_t handle, binder_uintptr_t cookie) {
  binder_handle_cookie hc{handle, cookie};
  return u32(cmd).raw(&hc, sizeof hc);
}

struct Call::State {
  std::atomic<bool> done{false};
  std::mutex lock;                   // an interrupt from another test thread vs. completion
  Completion* completion = nullptr;  // while not completed (guarded by `lock`)
  long result = 0;
  binder_write_read bwr{};
  std::vector<std::byte> out;
  std::vector<std::byte> write;
  std::vector<std::byte> read;
  std::atomic<std::size_t> user_reads{0};  // of the caller's memory, while the ioctl ran
  testing::FakeTimer* timer = nullptr;     // the engine's: waiting is what moves its time
};

namespace {

class TestCompletion final : public Completion {
 public:
  TestCompletion(std::shared_ptr<Call::State> state, const Env& env,
                 std::shared_ptr<testing::FakeFiles> files)
      : state_(std::move(state)),
        fake_memory_(env.address_space, &state_->user_reads),
        backing_memory_(env.backing.user_memory.get()),
        files_(std::move(files)) {}
  void complete(long result, std::span<const std::byte> out) override {
    EXPECT_FALSE(state_->done) << "completed twice";
    state_->result = result;
    state_->out.assign(out.begin(), out.end());
    if (out.size() == sizeof state_->bwr) std::memcpy(&state_->bwr, out.data(), out.size());
    {
      std::lock_guard guard(state_->lock);
      state_->completion = nullptr;
    }
    state_->done = true;
  }
  UserMemory& user_memory() override { return backing_memory_ ? *backing_memory_ : fake_memory_; }
  CallerFiles* caller_files() override { return files_.get(); }

 private:
  std::shared_ptr<Call::State> state_;
  testing::FakeUserMemory fake_memory_;
  UserMemory* const backing_memory_;
  std::shared_ptr<testing::FakeFiles> files_;
};

class TestMapping final : public MappingFinder {
 public:
  TestMapping(std::shared_ptr<bool> mapped, const BufferFile& file)
      : mapped_(std::move(mapped)), file_(file) {}
  std::optional<ClientMapping> find() override {
    if (!*mapped_) return std::nullopt;
    return ClientMapping{reinterpret_cast<std::uint64_t>(file_.data()), file_.size(), false};
  }

 private:
  std::shared_ptr<bool> mapped_;
  const BufferFile& file_;
};

std::vector<Br> parse(const std::byte* data, std::size_t size) {
  std::vector<Br> items;
  std::size_t pos = 0;
  while (pos + sizeof(std::uint32_t) <= size) {
    Br item;
    std::memcpy(&item.cmd, data + pos, sizeof item.cmd);
    pos += sizeof item.cmd;
    std::size_t len = item.cmd == BR_ERROR ? 0 : _IOC_SIZE(item.cmd);
    if (pos + len > size) {
      ADD_FAILURE() << "truncated " << br_name(item.cmd);
      break;
    }
    item.payload.assign(data + pos, data + pos + len);
    pos += len;
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

bool Call::done() const { return state->done; }
// The engine's time passes only while a test waits: callbacks due now run here, on the test
// thread, and when none is due the clock jumps to the next deadline. With nothing pending the call
// waits for another thread (which may yet arm the timer).
void Call::wait() const {
  while (!state->done) {
    if (state->timer->run_due() || state->timer->advance_to_next()) continue;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}
long Call::result() const { return state->result; }
std::size_t Call::user_reads() const { return state->user_reads; }
const binder_write_read& Call::bwr() const { return state->bwr; }

std::vector<Br> Call::items() const {
  if (!state->done) return {};
  return parse(state->read.data(), state->bwr.read_consumed);
}

binder_transaction_data Call::tr() const {
  for (const Br& item : items()) {
    if (item.cmd == BR_TRANSACTION || item.cmd == BR_REPLY || item.cmd == BR_TRANSACTION_SEC_CTX)
      return item.tr();
  }
  ADD_FAILURE() << "no transaction in " << names();
  return {};
}

namespace {

std::shared_ptr<Device> device_with_timer(std::shared_ptr<Driver> driver, Timer& timer,
                                          DeviceOptions options) {
  driver->set_timer(timer);
  return std::make_shared<Device>("binder", std::move(options), std::move(driver));
}

}  // namespace

Env::Env(DeviceOptions options, Backing backing)
    : backing(std::move(backing)), device(device_with_timer(driver, timer, std::move(options))) {}

Call Client::new_call() const {
  Call call{std::make_shared<Call::State>()};
  call.state->timer = &env_.timer;
  return call;
}

Client::Client(Env& env, pid_t pid, uid_t euid, bool mapped, std::size_t space)
    : env_(env), pid_(pid), euid_(euid), mapped_(std::make_shared<bool>(mapped)) {
  std::unique_ptr<BufferFile> buffers = env_.backing.buffer_file
                                            ? env_.backing.buffer_file(space)
                                            : testing::FakeBufferFile::create(space);
  buffers_ = buffers.get();
  auto finder = std::make_unique<TestMapping>(mapped_, *buffers_);
  proc_ = Proc::open(env_.device, OpenerIdentity{pid, pid, euid}, std::move(buffers),
                     std::move(finder));
}

testing::FakeFiles& Client::give_files(int max_fds) {
  files_ = std::make_shared<testing::FakeFiles>(env_.passed_files, max_fds);
  for (const char* name : {"stdin", "stdout", "stderr"}) files_->open(name);
  return *files_;
}

long Client::ioctl(pid_t tid, unsigned cmd, void* arg, std::size_t size, uid_t euid) {
  auto state = new_call().state;
  IoctlRequest request;
  request.pid = pid_;
  request.tid = tid;
  request.euid = euid == ~0u ? euid_ : euid;
  request.cmd = cmd;
  request.arg = {static_cast<const std::byte*>(arg), size};
  proc_->ioctl(request, std::make_unique<TestCompletion>(state, env_, files_));
  EXPECT_TRUE(state->done) << "ioctl " << std::hex << cmd << " did not finish";
  if (arg && state->out.size() == size) std::memcpy(arg, state->out.data(), size);
  return state->result;
}

Call Client::write_read(pid_t tid, const Commands& commands, std::size_t read_size, bool nonblock,
                        binder_size_t read_consumed) {
  Call call = new_call();
  auto& state = *call.state;
  state.write = commands.bytes;
  state.read.assign(read_size, std::byte{0xee});
  binder_write_read bwr{};
  bwr.write_size = state.write.size();
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(state.write.data());
  bwr.read_size = read_size;
  bwr.read_consumed = read_consumed;
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(state.read.data());
  return submit(tid, bwr, nonblock, std::move(call));
}

Call Client::submit(pid_t tid, const binder_write_read& bwr, bool nonblock) {
  return submit(tid, bwr, nonblock, new_call());
}

Call Client::submit(pid_t tid, const binder_write_read& bwr, bool nonblock, Call call) {
  auto& state = *call.state;
  state.bwr = bwr;
  IoctlRequest request;
  request.pid = pid_;
  request.tid = tid;
  request.euid = euid_;
  request.cmd = BINDER_WRITE_READ;
  request.arg = std::as_bytes(std::span<const binder_write_read, 1>(&bwr, 1));
  request.nonblock = nonblock;
  auto completion = std::make_unique<TestCompletion>(call.state, env_, files_);
  {
    std::lock_guard guard(state.lock);
    state.completion = completion.get();
  }
  proc_->ioctl(request, std::move(completion));
  return call;
}

Call Client::ioctl_async(pid_t tid, unsigned cmd, const void* arg, std::size_t size) {
  Call call = new_call();
  IoctlRequest request;
  request.pid = pid_;
  request.tid = tid;
  request.euid = euid_;
  request.cmd = cmd;
  request.arg = {static_cast<const std::byte*>(arg), size};
  auto completion = std::make_unique<TestCompletion>(call.state, env_, files_);
  {
    std::lock_guard guard(call.state->lock);
    call.state->completion = completion.get();
  }
  proc_->ioctl(request, std::move(completion));
  return call;
}

void Client::interrupt(pid_t tid, const Call& call) {
  {
    // The completion object lives until its complete() returns, which needs this lock.
    std::lock_guard guard(call.state->lock);
    if (call.state->completion) call.state->completion->mark_interrupted();
  }
  proc_->interrupt(tid);
}

}  // namespace cused::core::test
