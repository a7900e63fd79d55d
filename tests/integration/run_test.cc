// SPDX-License-Identifier: GPL-2.0-only
// The `cused run` frontend end to end (docs/run.md): forked children put themselves under the
// in-process daemon's seccomp frontend (cused::run::serve_me_by) and speak binder; the test is the
// daemon and watches its state. Each test names the spec rule it checks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "client/binder_device.h"
#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "cused/host/process_vm.h"
#include "cused/run/attach.h"
#include "cused/run/run_server.h"
#include "tests/integration/file_contents.h"
#include "tests/integration/mounted_binderfs.h"

namespace cused {
namespace {

using client::BinderDevice;
using testing::MountedBinderfs;
using testing::wait_until;

// A pipe a child reports numbers on.
class Report {
 public:
  Report() {
    if (pipe(fds_) != 0) std::abort();
  }
  ~Report() {
    close(fds_[0]);
    close(fds_[1]);
  }
  void send(long value) const { [[maybe_unused]] auto n = write(fds_[1], &value, sizeof value); }
  std::optional<long> receive() const {
    long value = 0;
    return read(fds_[0], &value, sizeof value) == sizeof value ? std::optional(value)
                                                               : std::nullopt;
  }

 private:
  int fds_[2];
};

// A forked child running `body` under the daemon's seccomp frontend; its exit status is body's
// result (0 = as expected), 90 when it could not get under the frontend.
class RunChild {
 public:
  RunChild(const std::string& mount, const std::function<int()>& body) {
    pid_ = fork();
    if (pid_ == 0) {
      if (run::serve_me_by(mount) != 0) _exit(90);
      _exit(body());
    }
  }
  ~RunChild() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  // The child's exit status, or -1 if it did not exit normally.
  int finish() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
};

// A read of up to 16 words; the ioctl's result (0 or -errno).
int read_words(int fd, std::uint32_t (&words)[16]) {
  binder_write_read bwr{};
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
  bwr.read_size = sizeof words;
  return ioctl(fd, BINDER_WRITE_READ, &bwr) == 0 ? 0 : -errno;
}

class RunTest : public ::testing::Test {
 protected:
  RunTest() { server_.emplace(mount_.registry(), mount_.filesystem().mount_device()); }
  std::string node() const { return mount_.path("binder"); }

  // A program that calls handle 0 (the 20 calls of its warm-up, then `warmed`), waits for `go`,
  // makes `calls` calls and reports `done`; with `linger`, it exits at the next `go` only, so
  // that its receivers are still there when `done` is acted on.
  int call_handle_zero(int calls, const Report& warmed, const Report& go, const Report& done,
                       bool linger) const {
    client::ProcessOptions options;
    options.device = node();
    options.max_threads = 0;
    client::BinderProcess process(options);
    client::IpcThread thread(process);
    client::Parcel data;
    data.write_int32(41);
    auto call = [&] {
      client::Parcel reply;
      return thread.transact(0, 1, data, &reply) == client::kOk;
    };
    for (int i = 0; i < 20; ++i)
      if (!call()) return 1;
    warmed.send(1);
    if (!go.receive()) return 2;
    for (int i = 0; i < calls; ++i)
      if (!call()) return 3;
    done.send(1);
    return !linger || go.receive() ? 0 : 4;
  }

  MountedBinderfs mount_;
  std::optional<run::RunServer> server_;
};

// The ioctls reach the daemon through notifications, not FUSE: the server counts them, and the
// kernel's argument handling holds: NULL where binder reads nothing (S2.6, S2.3; the FUSE path
// fails these with EFAULT), BINDER_VERSION's put_user into a bad address is EINVAL (S2.7).
TEST_F(RunTest, IoctlsAreServedWithTheKernelsArgumentHandling_S2_6_S2_3_S2_7) {
  std::uint64_t before = server_->served();
  RunChild child(mount_.dir(), [&] {
    BinderDevice device(node());
    if (device.map() != 0 || device.version() != 8) return 1;
    if (ioctl(device.fd(), BINDER_SET_CONTEXT_MGR, nullptr) != 0) return 2;
    if (ioctl(device.fd(), BINDER_THREAD_EXIT, nullptr) != 0) return 3;
    if (ioctl(device.fd(), BINDER_VERSION, reinterpret_cast<void*>(8)) != -1 || errno != EINVAL)
      return 4;
    return 0;
  });
  EXPECT_EQ(child.finish(), 0);
  EXPECT_GE(server_->served(), before + 4);
}

// Every other ioctl, binder's type on another file included, runs in the kernel untouched.
TEST_F(RunTest, OtherFilesIoctlsContinueInTheKernel) {
  RunChild child(mount_.dir(), [&] {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    binder_version version{};
    // binder's type on a pipe: the pipe's own answer.
    if (ioctl(fds[0], BINDER_VERSION, &version) != -1 || errno != ENOTTY) return 2;
    int queued = -1;
    if (ioctl(fds[0], FIONREAD, &queued) != 0 || queued != 0) return 3;
    return 0;
  });
  EXPECT_EQ(child.finish(), 0);
}

// S1.12: a signal to a thread parked in a read ends it with EINTR (the program waits killably
// only, so the daemon's signal watcher notices the pending signal and ends the read).
TEST_F(RunTest, SignalEndsAParkedReadWithEintr_S1_12) {
  Report tid;
  RunChild child(mount_.dir(), [&] {
    struct sigaction action {};
    action.sa_handler = [](int) {};
    sigaction(SIGUSR1, &action, nullptr);  // no SA_RESTART
    BinderDevice device(node());
    std::uint32_t words[16];
    if (device.map() != 0 || read_words(device.fd(), words) != 0) return 1;  // the first read
    tid.send(gettid());
    return read_words(device.fd(), words) == -EINTR ? 0 : 2;
  });
  auto reader = tid.receive();
  ASSERT_TRUE(reader);
  ASSERT_TRUE(mount_.wait_for_parked_read(child.pid(), static_cast<pid_t>(*reader)));
  syscall(SYS_tgkill, child.pid(), *reader, SIGUSR1);
  EXPECT_EQ(child.finish(), 0);
}

// S1.9: SIGKILL of a program with a read parked cleans up: the proc is released and the session
// goes once no task is left under the filter.
TEST_F(RunTest, KilledProgramWithAParkedReadIsReleased_S1_9) {
  Report tid;
  RunChild child(mount_.dir(), [&] {
    BinderDevice device(node());
    std::uint32_t words[16];
    if (device.map() != 0 || read_words(device.fd(), words) != 0) return 1;
    tid.send(gettid());
    read_words(device.fd(), words);
    return 2;
  });
  auto reader = tid.receive();
  ASSERT_TRUE(reader);
  ASSERT_TRUE(mount_.wait_for_parked_read(child.pid(), static_cast<pid_t>(*reader)));
  kill(child.pid(), SIGKILL);
  EXPECT_EQ(child.finish(), -1);
  EXPECT_TRUE(mount_.wait_for_open_procs(0));
  EXPECT_TRUE(wait_until([&] { return server_->sessions() == 0; }));
}

// A daemon that goes while a program waits in a parked read: the read fails (ENOSYS, what the
// kernel answers once a listener is gone) instead of hanging.
TEST_F(RunTest, DaemonGoingEndsAParkedReadWithEnosys) {
  Report tid;
  RunChild child(mount_.dir(), [&] {
    BinderDevice device(node());
    std::uint32_t words[16];
    if (device.map() != 0 || read_words(device.fd(), words) != 0) return 1;
    tid.send(gettid());
    return read_words(device.fd(), words) == -ENOSYS ? 0 : 2;
  });
  auto reader = tid.receive();
  ASSERT_TRUE(reader);
  ASSERT_TRUE(mount_.wait_for_parked_read(child.pid(), static_cast<pid_t>(*reader)));
  server_.reset();
  EXPECT_EQ(child.finish(), 0);
}

// A program under `cused run` and a plain FUSE-path process talk on one device: the FUSE-path
// context manager answers a run client's call (S4.8).
TEST_F(RunTest, RunAndFusePathProcessesTalkOnOneDevice_S4_8) {
  Report ready;
  pid_t manager = fork();
  if (manager == 0) {
    client::ProcessOptions options;
    options.device = node();
    options.max_threads = 0;
    client::BinderProcess process(options);
    int result = process.become_context_manager(
        [](const client::IncomingTransaction& txn, client::Parcel& reply) {
          reply.write_int32(txn.data.read_int32().value_or(0) + 1);
          return client::kOk;
        });
    ready.send(result);
    client::IpcThread thread(process);
    thread.join_looper(true);
    _exit(0);
  }
  ASSERT_EQ(ready.receive().value_or(-1), 0);
  RunChild caller(mount_.dir(), [&] {
    client::ProcessOptions options;
    options.device = node();
    options.max_threads = 0;
    client::BinderProcess process(options);
    client::IpcThread thread(process);
    client::Parcel data, reply;
    data.write_int32(41);
    if (thread.transact(0, 1, data, &reply) != client::kOk) return 1;
    return reply.read_int32() == 42 ? 0 : 2;
  });
  EXPECT_EQ(caller.finish(), 0);
  kill(manager, SIGKILL);
  waitpid(manager, nullptr, 0);
}

// Writes a BC_ stream; 0 or -errno.
int write_commands(int fd, const std::vector<std::byte>& commands) {
  binder_write_read bwr{};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(commands.data());
  bwr.write_size = commands.size();
  return ioctl(fd, BINDER_WRITE_READ, &bwr) == 0 ? 0 : -errno;
}

// BC_TRANSACTION of a oneway to handle 0 carrying one FD object (S5.3).
std::vector<std::byte> oneway_with_fd(int fd_to_send, flat_binder_object& object,
                                      binder_size_t& offset) {
  object = {};
  object.hdr.type = BINDER_TYPE_FD;
  object.handle = static_cast<std::uint32_t>(fd_to_send);
  offset = 0;
  binder_transaction_data txn{};
  txn.flags = TF_ONE_WAY;
  txn.data_size = sizeof object;
  txn.offsets_size = sizeof offset;
  txn.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(&object);
  txn.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(&offset);
  std::vector<std::byte> commands(sizeof(std::uint32_t) + sizeof txn);
  std::uint32_t code = BC_TRANSACTION;
  std::memcpy(commands.data(), &code, sizeof code);
  std::memcpy(commands.data() + sizeof code, &txn, sizeof txn);
  return commands;
}

std::size_t open_fds() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++count;
  return count;
}

// S5.7, S1.9: fds in flight when their sender and then their receiver are SIGKILLed: the daemon
// (this process) holds each sender file only until its transaction goes, so its descriptors are
// back to the baseline, and the survivor that still has the pipe's read end sees end of file
// once its own write end is closed: no copy of it is left anywhere.
TEST_F(RunTest, KilledSenderAndReceiverWithFdsInFlightLeakNothing_S5_7_S1_9) {
  constexpr int kOneways = 8;
  int pipe_fds[2];
  ASSERT_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
  Report ready, sent;
  const std::size_t baseline = open_fds();
  RunChild manager(mount_.dir(), [&] {
    BinderDevice device(node());
    flat_binder_object object{};
    object.flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
    if (device.map() != 0 || ioctl(device.fd(), BINDER_SET_CONTEXT_MGR_EXT, &object) != 0) return 1;
    ready.send(1);
    pause();  // never reads: the oneways stay queued on its node
    return 2;
  });
  ASSERT_TRUE(ready.receive());
  RunChild sender(mount_.dir(), [&] {
    BinderDevice device(node());
    if (device.map() != 0) return 1;
    for (int i = 0; i < kOneways; ++i) {
      flat_binder_object object;
      binder_size_t offset;
      if (write_commands(device.fd(), oneway_with_fd(pipe_fds[1], object, offset)) != 0) return 2;
    }
    sent.send(1);
    pause();
    return 3;
  });
  ASSERT_TRUE(sent.receive());
  close(pipe_fds[1]);
  // One oneway is on the node's proc queue, the rest wait behind it (S4.5); each holds a file
  // (besides the two procs' memfds and the two programs' listeners).
  EXPECT_GE(open_fds(), baseline - 1 + kOneways) << "the daemon holds no sender file";
  kill(sender.pid(), SIGKILL);
  EXPECT_EQ(sender.finish(), -1);
  kill(manager.pid(), SIGKILL);
  EXPECT_EQ(manager.finish(), -1);
  EXPECT_TRUE(mount_.wait_for_open_procs(0));
  EXPECT_TRUE(wait_until([&] { return open_fds() == baseline - 1; })) << [] {
    std::string links;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
      links += std::filesystem::read_symlink(entry.path()).string() + " ";
    return links;
  }();
  char byte;
  EXPECT_EQ(read(pipe_fds[0], &byte, 1), 0) << "a copy of the write end is still open";
  close(pipe_fds[0]);
}

// A context manager under `cused run` answering every call with its int32 plus one (with an empty
// reply when not `plus_one`), replying with TF_DEFER_COMPLETE when `defer` (one looper thread).
// Reports 0 on `ready` once it serves.
int serve_plus_one(const std::string& node, bool defer, const Report& ready, bool plus_one = true) {
  client::ProcessOptions options;
  options.device = node;
  options.max_threads = 0;
  options.defer_complete = defer;
  client::BinderProcess process(options);
  int result = process.become_context_manager(
      [plus_one](const client::IncomingTransaction& txn, client::Parcel& reply) {
        if (plus_one) reply.write_int32(txn.data.read_int32().value_or(0) + 1);
        return client::kOk;
      });
  ready.send(result);
  if (result != 0) return 1;
  client::IpcThread thread(process);
  thread.join_looper(true);
  return 0;
}

// Issue 30: a deferred sync call under `cused run` costs the daemon at most 4 accesses to its
// callers' memory: each side's binder_write_read read with its commands (and the client's
// payload) in one process_vm_readv, and each side's BR_ stream written with its
// binder_write_read in one process_vm_writev (8 before: each binder_write_read on its own).
TEST_F(RunTest, DeferredCallCostsAtMostFourRemoteAccesses) {
  constexpr int kCalls = 200;
  Report ready, warmed, go, done;
  RunChild manager(mount_.dir(), [&] { return serve_plus_one(node(), true, ready, false); });
  ASSERT_EQ(ready.receive().value_or(-1), 0);
  RunChild caller(mount_.dir(), [&] { return call_handle_zero(kCalls, warmed, go, done, false); });
  ASSERT_TRUE(warmed.receive());
  std::uint64_t before = host::remote_accesses();
  go.send(1);
  ASSERT_TRUE(done.receive());
  double per_call = static_cast<double>(host::remote_accesses() - before) / kCalls;
  EXPECT_EQ(caller.finish(), 0);
  // 4 a call, and now and then a call that costs 2 more (timing-dependent, not yet explained:
  // 802 accesses for 200 calls in 5 of 6 runs on the loaded 2-vCPU machine, 2002 for 1000): the
  // bound allows one such call in 200, and the old 8 a call fails it by far.
  EXPECT_LE(per_call, 4.0 + 2.0 / kCalls);
}

// Voluntary context switches so far (sleeps) of each of this process's threads named `name`.
std::map<std::string, std::uint64_t> sleeps_of_threads_named(const std::string& name) {
  std::map<std::string, std::uint64_t> sleeps;
  constexpr std::string_view kField = "\nvoluntary_ctxt_switches:";
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (testing::read_file(task.path() / "comm") != name + "\n") continue;
    std::string status = testing::read_file(task.path() / "status");
    auto at = status.find(kField);
    if (at != std::string::npos)
      sleeps[task.path().filename()] = std::stoull(status.substr(at + kField.size()));
  }
  return sleeps;
}

// The kernel wakes every thread blocked in SECCOMP_IOCTL_NOTIF_RECV for each notification; the
// receivers of a program whose calls come from one thread take turns instead (receive_turns.h),
// so that a call costs no thread switch beyond its floor (issue 30). In a ping-pong between two
// single-threaded programs the turn stays with one receiver per program: at most 2 of the
// receivers sleep and wake, the others stay asleep. Blocked in RECV together, every receiver of
// both programs would be woken by each of its program's notifications.
TEST_F(RunTest, ANotificationWakesOneReceiver) {
  constexpr int kCalls = 300;
  Report ready, warmed, go, done;
  RunChild manager(mount_.dir(), [&] { return serve_plus_one(node(), true, ready, false); });
  ASSERT_EQ(ready.receive().value_or(-1), 0);
  RunChild caller(mount_.dir(), [&] { return call_handle_zero(kCalls, warmed, go, done, true); });
  ASSERT_TRUE(warmed.receive());
  auto before = sleeps_of_threads_named(run::kReceiverThreadName);
  go.send(1);
  ASSERT_TRUE(done.receive());
  auto after = sleeps_of_threads_named(run::kReceiverThreadName);
  go.send(1);
  EXPECT_EQ(caller.finish(), 0);
  ASSERT_GE(before.size(), 4u);  // at least 2 receivers per program
  // A thread that had not yet run to its first wait sleeps once; one woken by the calls sleeps
  // up to once a call.
  int woken = 0;
  for (const auto& [tid, sleeps] : after) woken += sleeps - before[tid] >= kCalls / 10;
  EXPECT_GE(woken, 1);
  EXPECT_LE(woken, 2) << "receivers woken again and again during " << kCalls << " calls, of "
                      << after.size();
}

// A page of its own, so that it can be unmapped or made read-only alone.
std::byte* own_page(int prot = PROT_READ | PROT_WRITE) {
  void* page = mmap(nullptr, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return page == MAP_FAILED ? nullptr : static_cast<std::byte*>(page);
}

// Writes at `commands` a BC_TRANSACTION to handle 0 whose payload is the int32 at `payload`;
// its size.
std::size_t put_call(std::byte* commands, const std::int32_t* payload) {
  binder_transaction_data txn{};
  txn.code = 1;
  txn.data_size = sizeof *payload;
  txn.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(payload);
  std::uint32_t code = BC_TRANSACTION;
  std::memcpy(commands, &code, sizeof code);
  std::memcpy(commands + sizeof code, &txn, sizeof txn);
  return sizeof code + sizeof txn;
}

// The int32 of the BR_REPLY in a read buffer (its buffer freed with BC_FREE_BUFFER on `fd`), or
// nullopt when there is none.
std::optional<std::int32_t> reply_in(int fd, const std::byte* read, std::size_t consumed) {
  std::size_t at = 0;
  while (at + sizeof(std::uint32_t) <= consumed) {
    std::uint32_t cmd;
    std::memcpy(&cmd, read + at, sizeof cmd);
    at += sizeof cmd;
    if (cmd == BR_REPLY) {
      binder_transaction_data txn;
      std::memcpy(&txn, read + at, sizeof txn);
      std::int32_t value;
      std::memcpy(&value, reinterpret_cast<const void*>(txn.data.ptr.buffer), sizeof value);
      std::byte free_cmd[sizeof(std::uint32_t) + sizeof(binder_uintptr_t)];
      std::uint32_t code = BC_FREE_BUFFER;
      std::memcpy(free_cmd, &code, sizeof code);
      std::memcpy(free_cmd + sizeof code, &txn.data.ptr.buffer, sizeof(binder_uintptr_t));
      binder_write_read bwr{};
      bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(free_cmd);
      bwr.write_size = sizeof free_cmd;
      if (ioctl(fd, BINDER_WRITE_READ, &bwr) != 0) return std::nullopt;
      return value;
    }
    at += _IOC_SIZE(cmd);
  }
  return std::nullopt;
}

// One call of `value` with its commands at `commands` and its payload at `payload`, the
// binder_write_read at `bwr`: the reply's int32, or -errno of the ioctl (-1000: no reply).
long call_from(int fd, std::byte* commands, std::int32_t* payload, std::int32_t value,
               binder_write_read* bwr) {
  *payload = value;
  static std::byte read[256];
  binder_write_read args{};
  args.write_buffer = reinterpret_cast<binder_uintptr_t>(commands);
  args.write_size = put_call(commands, payload);
  args.read_buffer = reinterpret_cast<binder_uintptr_t>(read);
  args.read_size = sizeof read;
  *bwr = args;
  if (ioctl(fd, BINDER_WRITE_READ, bwr) != 0) return -errno;
  if (auto reply = reply_in(fd, read, bwr->read_consumed)) return *reply;
  // A thread's first read returns at once (S2.0 need_return), before the reply.
  binder_write_read more{};
  more.read_buffer = args.read_buffer;
  more.read_size = args.read_size;
  if (ioctl(fd, BINDER_WRITE_READ, &more) != 0) return -errno;
  return reply_in(fd, read, more.read_consumed).value_or(-1000);
}

class RunReadAheadTest : public RunTest {
 protected:
  // Runs `body` in a client under `cused run` whose calls reach a plus-one context manager.
  int with_manager(const std::function<int(int fd)>& body) {
    Report ready;
    RunChild manager(mount_.dir(), [&] { return serve_plus_one(node(), false, ready); });
    if (ready.receive().value_or(-1) != 0) return 100;
    RunChild caller(mount_.dir(), [&] {
      BinderDevice device(node());
      if (device.map() != 0) return 101;
      return body(device.fd());
    });
    return caller.finish();
  }
};

// Issue 30: the daemon guesses a binder_write_read's commands and payload at the thread's last
// addresses and reads them with the struct. Commands written elsewhere than last time are read
// where they are (S3.1), even when the old place holds a valid call of another value.
TEST_F(RunReadAheadTest, CommandsElsewhereThanLastTimeAreReadWhereTheyAre_S3_1) {
  EXPECT_EQ(with_manager([](int fd) {
              std::byte* first = own_page();
              std::byte* second = own_page();
              if (!first || !second) return 1;
              auto* first_payload = reinterpret_cast<std::int32_t*>(first + 2048);
              auto* second_payload = reinterpret_cast<std::int32_t*>(second + 2048);
              binder_write_read bwr;
              if (call_from(fd, first, first_payload, 41, &bwr) != 42) return 2;
              // The guess (first, with 100 in its payload) is a call too, of another value.
              *first_payload = 100;
              if (call_from(fd, second, second_payload, 7, &bwr) != 8) return 3;
              if (call_from(fd, second, first_payload, 9, &bwr) != 10) return 4;
              if (call_from(fd, first, second_payload, 11, &bwr) != 12) return 5;
              return 0;
            }),
            0);
}

// A guessed write buffer that is gone since (unmapped) costs nothing but the guess: the call from
// elsewhere works, and a call whose write buffer is that unmapped page fails with EFAULT at its
// first command (S3.1: write_consumed 0, read_consumed 0), after which the thread calls on.
TEST_F(RunReadAheadTest, GuessedBufferThatIsGoneFailsOnlyTheCallThatUsesIt_S3_1) {
  EXPECT_EQ(with_manager([](int fd) {
              std::byte* gone = own_page();
              std::byte* kept = own_page();
              if (!gone || !kept) return 1;
              auto* payload = reinterpret_cast<std::int32_t*>(kept + 2048);
              binder_write_read bwr;
              if (call_from(fd, gone, payload, 1, &bwr) != 2) return 2;
              if (munmap(gone, 4096) != 0) return 3;
              if (call_from(fd, kept, payload, 3, &bwr) != 4) return 4;
              if (call_from(fd, kept, payload, 5, &bwr) != 6) return 5;  // guess: kept
              // As before the unmap, from the page that is gone now.
              binder_write_read bad{};
              bad.write_buffer = reinterpret_cast<binder_uintptr_t>(gone);
              bad.write_size = bwr.write_size;
              bad.read_buffer = bwr.read_buffer;
              bad.read_size = bwr.read_size;
              if (ioctl(fd, BINDER_WRITE_READ, &bad) != -1 || errno != EFAULT) return 6;
              if (bad.write_consumed != 0 || bad.read_consumed != 0) return 7;
              if (call_from(fd, kept, payload, 7, &bwr) != 8) return 8;
              return 0;
            }),
            0);
}

// binder_ioctl_write_read copies the binder_write_read back after the read: a read-only one
// fails the ioctl with EFAULT once the call is done, its reply in the read buffer; the daemon
// writes buffer and struct in one access, and the buffer's part still arrives.
TEST_F(RunReadAheadTest, ReadOnlyBinderWriteReadFailsWithEfaultAfterTheCall_S3_2) {
  EXPECT_EQ(with_manager([](int fd) {
              std::byte* commands = own_page();
              std::byte* args = own_page();
              if (!commands || !args) return 1;
              auto* payload = reinterpret_cast<std::int32_t*>(commands + 2048);
              binder_write_read bwr;
              if (call_from(fd, commands, payload, 1, &bwr) != 2) return 2;
              static std::byte read[256];
              std::memset(read, 0, sizeof read);
              *payload = 20;
              binder_write_read fixed{};
              fixed.write_buffer = reinterpret_cast<binder_uintptr_t>(commands);
              fixed.write_size = put_call(commands, payload);
              fixed.read_buffer = reinterpret_cast<binder_uintptr_t>(read);
              fixed.read_size = sizeof read;
              std::memcpy(args, &fixed, sizeof fixed);
              if (mprotect(args, 4096, PROT_READ) != 0) return 3;
              if (ioctl(fd, BINDER_WRITE_READ, args) != -1 || errno != EFAULT) return 4;
              if (reply_in(fd, read, sizeof read) != 21) return 5;
              if (call_from(fd, commands, payload, 30, &bwr) != 31) return 6;
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace cused
