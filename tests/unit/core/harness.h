// SPDX-License-Identifier: GPL-2.0-only
// In-process clients for the protocol engine's unit tests. A "client" is a proc opened on a test
// device; its "threads" are plain tid numbers (core never blocks, so one test thread can play
// every binder thread). Everything runs on fakes, with no OS object behind them: user memory is
// this test process's own memory, copied in-process (tests/unit/fake_user_memory.h), where a bad
// address is EFAULT as for a real caller (the null pages, and what a test declares unreachable in
// Env::address_space); each client's buffer space is heap memory with the memfd's page semantics
// (tests/unit/fake_buffer_file.h), and the client's mapping of it is the store's own bytes: a
// delivered BR_TRANSACTION points at bytes the test can read directly. Time is FakeTimer's. A
// client given a file table (give_files) is served as `cused run` serves its callers: its
// requests carry a fake CallerFiles (tests/fake_files.h), so it can send and receive fds; without
// one it is a FUSE caller.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer_file.h"
#include "core/completion.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/proc.h"
#include "core/sync/lock_policy.h"
#include "core/user_memory.h"
#include "tests/fake_files.h"
#include "tests/unit/fake_timer.h"
#include "tests/unit/fake_user_memory.h"
#include "uapi/binder.h"

namespace cused::core::test {

// One returned item of a read: the BR_ code and its payload.
struct Br {
  std::uint32_t cmd = 0;
  std::vector<std::byte> payload;

  binder_transaction_data tr() const;
  binder_transaction_data_secctx tr_secctx() const;
  binder_ptr_cookie ptr_cookie() const;
  binder_uintptr_t cookie() const;
};

std::string br_name(std::uint32_t cmd);
// "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY": what a read returned, for EXPECT_EQ.
std::string names(const std::vector<Br>& items);

// A parcel-lite: data bytes and the offsets of the objects in them.
class Parcel {
 public:
  Parcel& u32(std::uint32_t value) { return raw(&value, sizeof value); }
  Parcel& u64(std::uint64_t value) { return raw(&value, sizeof value); }
  Parcel& raw(const void* data, std::size_t len);
  Parcel& binder(binder_uintptr_t ptr, binder_uintptr_t cookie, std::uint32_t flags = 0);
  Parcel& weak_binder(binder_uintptr_t ptr, binder_uintptr_t cookie);
  Parcel& handle(std::uint32_t handle);
  Parcel& weak_handle(std::uint32_t handle);
  Parcel& fd(int fd);
  Parcel& fda(binder_size_t num_fds, binder_size_t parent, binder_size_t parent_offset);
  Parcel& ptr(const void* buffer, binder_size_t length, std::optional<binder_size_t> parent = {},
              binder_size_t parent_offset = 0);
  // Adds an offset entry without an object (for malformed-offset tests).
  Parcel& offset(binder_size_t offset) {
    offsets.push_back(offset);
    return *this;
  }
  template <typename T>
  Parcel& object(const T& obj) {
    offsets.push_back(data.size());
    return raw(&obj, sizeof obj);
  }

  std::vector<std::byte> data;
  std::vector<binder_size_t> offsets;
};

// A BC_ command stream. Keeps every payload it points at alive.
class Commands {
 public:
  Commands& u32(std::uint32_t value) { return raw(&value, sizeof value); }
  Commands& u64(std::uint64_t value) { return raw(&value, sizeof value); }
  Commands& raw(const void* data, std::size_t len);
  Commands& transaction(std::uint32_t handle, std::uint32_t code, std::uint32_t flags,
                        const Parcel& parcel = {});
  Commands& transaction_sg(std::uint32_t handle, std::uint32_t code, std::uint32_t flags,
                           const Parcel& parcel, binder_size_t buffers_size);
  Commands& reply(std::uint32_t flags = 0, const Parcel& parcel = {});
  Commands& reply_sg(std::uint32_t flags, const Parcel& parcel, binder_size_t buffers_size);
  // A transaction whose binder_transaction_data the test fills itself.
  Commands& transaction_raw(std::uint32_t cmd, const binder_transaction_data& tr);
  // A BC_REPLY whose data is `len` bytes the caller already has at `data` (no objects).
  Commands& reply_raw_from(const void* data, std::size_t len, std::uint32_t flags = 0);
  Commands& free_buffer(binder_uintptr_t buffer) { return u32(BC_FREE_BUFFER).u64(buffer); }
  Commands& ref(std::uint32_t cmd, std::uint32_t handle) { return u32(cmd).u32(handle); }
  Commands& done(std::uint32_t cmd, binder_uintptr_t ptr, binder_uintptr_t cookie);
  Commands& death(std::uint32_t cmd, std::uint32_t handle, binder_uintptr_t cookie);
  Commands& dead_binder_done(binder_uintptr_t cookie) {
    return u32(BC_DEAD_BINDER_DONE).u64(cookie);
  }

  std::vector<std::byte> bytes;

 private:
  binder_transaction_data describe(std::uint32_t handle, std::uint32_t code, std::uint32_t flags,
                                   const Parcel& parcel);
  std::deque<Parcel> kept_;
};

// One BINDER_WRITE_READ: finished at once or parked until work arrives.
struct Call {
  struct State;
  std::shared_ptr<State> state;

  bool done() const;
  // Blocks the calling test thread (never the engine) until the call finished.
  void wait() const;
  long result() const;
  // How many reads of the caller's memory the ioctl made (each one system call in the daemon).
  std::size_t user_reads() const;
  const binder_write_read& bwr() const;
  // The items the read returned (read_consumed bytes).
  std::vector<Br> items() const;
  std::string names() const { return test::names(items()); }
  // The single transaction or reply among the items (fails the test when there is none).
  binder_transaction_data tr() const;
};

class Env;

class Client {
 public:
  // `mapped`: whether the client has mapped its buffer space (S1.7).
  Client(Env& env, pid_t pid, uid_t euid = 1000, bool mapped = true,
         std::size_t space = (1u << 20) - 2 * 4096);

  pid_t pid() const { return pid_; }
  Proc& proc() { return *proc_; }
  // From now on the client's requests carry this file table, pre-filled with stdin, stdout and
  // stderr (fds 0-2); the proc can receive fds after its next ioctl (S5.6).
  testing::FakeFiles& give_files(int max_fds = 1024);
  // Its file table, null for a FUSE caller.
  testing::FakeFiles* files() { return files_.get(); }
  std::shared_ptr<Proc>& handle() { return proc_; }
  void set_mapped(bool mapped) { *mapped_ = mapped; }
  const BufferFile& buffers() const { return *buffers_; }

  // A simple ioctl that must finish at once; `arg` is copied in and, for RW ioctls, back out.
  long ioctl(pid_t tid, unsigned cmd, void* arg = nullptr, std::size_t size = 0, uid_t euid = ~0u);
  template <typename T>
  long ioctl(pid_t tid, unsigned cmd, T& arg) {
    return ioctl(tid, cmd, &arg, sizeof arg);
  }
  // An ioctl that may park (BINDER_FREEZE with a timeout): the argument is copied in at once.
  Call ioctl_async(pid_t tid, unsigned cmd, const void* arg, std::size_t size);
  template <typename T>
  Call ioctl_async(pid_t tid, unsigned cmd, const T& arg) {
    return ioctl_async(tid, cmd, &arg, sizeof arg);
  }
  Call write_read(pid_t tid, const Commands& commands, std::size_t read_size = 256,
                  bool nonblock = false, binder_size_t read_consumed = 0);
  // BINDER_WRITE_READ with a binder_write_read the test made (its buffers are the test's).
  Call submit(pid_t tid, const binder_write_read& bwr, bool nonblock = false);
  Call read(pid_t tid, std::size_t read_size = 256, bool nonblock = false) {
    return write_read(tid, {}, read_size, nonblock);
  }
  // Writes and expects the write to be fully consumed without error; returns the call.
  Call write(pid_t tid, const Commands& commands) { return write_read(tid, commands, 0); }

  // A signal for `tid`'s parked call (S1.12): what the frontend does on FUSE_INTERRUPT.
  void interrupt(pid_t tid, const Call& call);
  void release() { proc_->release(); }

 private:
  Call submit(pid_t tid, const binder_write_read& bwr, bool nonblock, Call call);
  Call new_call() const;  // a call whose wait() moves the env's timer

  Env& env_;
  const pid_t pid_;
  const uid_t euid_;
  std::shared_ptr<bool> mapped_;
  std::shared_ptr<testing::FakeFiles> files_;
  const BufferFile* buffers_;
  std::shared_ptr<Proc> proc_;
};

// What a client's proc runs on in place of the fakes: unset, every client gets a fake buffer store
// and fake user memory. The engine benchmark (tests/bench/engine_bench.cc) sets both to the
// daemon's own (the memfd, process_vm_readv/writev), to measure what the daemon pays.
struct Backing {
  // The buffer store of a client with `space` bytes of buffer space.
  std::function<std::unique_ptr<BufferFile>(std::size_t space)> buffer_file;
  // The user memory every request uses, one object for all of them so that a request costs no
  // allocation more than with the fake (Call::user_reads() then counts nothing).
  std::shared_ptr<UserMemory> user_memory;
};

class Env {
 public:
  explicit Env(DeviceOptions options = {}, Backing backing = {});
  const Backing backing;
  // What of this process's memory every client's user memory cannot reach (forbid()); declared
  // before the device, so it outlives every request the engine still holds.
  testing::FakeAddressSpace address_space;
  // The driver's timer (declared before it: it outlives the driver and what its callbacks hold).
  testing::FakeTimer timer;
  std::shared_ptr<Driver> driver = std::make_shared<Driver>();
  std::shared_ptr<Device> device;
  // PassedFile objects alive, over every client's file table (none may outlive its transaction).
  testing::PassedFileCount passed_files = testing::new_passed_file_count();
};

// A lock policy as a gtest parameter name ("spin-then-park" -> "spinthenpark"), for suites that
// run under every lock_policy=.
inline std::string policy_param_name(sync::LockPolicy policy) {
  std::string name(sync::to_string(policy));
  std::erase(name, '-');
  return name;
}

// Reads a delivered buffer's data as bytes (the client's mapping is ours).
inline std::vector<std::byte> buffer_bytes(const binder_transaction_data& tr) {
  auto* data = reinterpret_cast<const std::byte*>(tr.data.ptr.buffer);
  return {data, data + tr.data_size};
}
template <typename T>
T object_at(const binder_transaction_data& tr, binder_size_t offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const std::byte*>(tr.data.ptr.buffer) + offset,
              sizeof value);
  return value;
}

}  // namespace cused::core::test
