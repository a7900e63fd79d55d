// SPDX-License-Identifier: GPL-2.0-only
// FUSE over io_uring (docs/design.md section 2): a parked binder read holds one ring entry, replies
// come from whichever daemon thread delivers work, and signals must still end a parked read
// (S1.12) although libfuse 3.18 never hands FUSE_INTERRUPT for an io_uring request to the
// filesystem (cused/binderfs/uring_interrupts.h watches the callers' signals instead).
#include <gtest/gtest.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "client/binder_device.h"
#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "tests/integration/mounted_binderfs.h"

namespace cused {
namespace {

using namespace std::chrono_literals;
using client::BinderDevice;

// Turns the fuse module's enable_uring on when we may (CI runs as root); false if impossible.
bool enable_fuse_uring() {
  const char* parameter = "/sys/module/fuse/parameters/enable_uring";
  { std::ofstream(parameter) << "Y"; }
  std::ifstream in(parameter);
  char value = 'N';
  in >> value;
  return value == 'Y';
}

binderfs::MountOptions uring_mount() {
  binderfs::MountOptions options;
  options.io_uring = true;
  return options;
}

int read_once(const BinderDevice& device) {
  std::uint32_t words[16];
  binder_write_read bwr{};
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
  bwr.read_size = sizeof words;
  return device.write_read(bwr);
}

// A forked child process, as a binder client or server is. This test process is also the FUSE
// daemon: the child closes what it inherited of it (/dev/fuse, the io_uring rings), or a child
// stuck on the mount would keep the connection alive past the daemon's death.
class Child {
 public:
  // `body` runs in the child; its result is the exit status. The child gets `report`'s write end
  // as fd 3 (or no pipe when `report` is null).
  explicit Child(const std::function<int()>& body, const int* report = nullptr) {
    pid_ = fork();
    if (pid_ != 0) return;
    int keep = 2;
    if (report && dup2(report[1], 3) == 3) keep = 3;
    syscall(SYS_close_range, keep + 1, ~0U, 0U);
    _exit(run_body(body));
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      exited_within(5s);  // if not, it is stuck on the mount, which the teardown aborts
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // The exit status of a child whose body threw.
  static constexpr int kThrew = 125;
  // Reaps the child if it exits by `limit`; its waitpid status is then status().
  bool exited_within(std::chrono::milliseconds limit) {
    return testing::wait_until(
        [&] { return reaped_ || (reaped_ = waitpid(pid_, &status_, WNOHANG) == pid_); }, limit);
  }
  int status() const { return status_; }

 private:
  // An exception must not leave the body: it would unwind through the copy of the parent's stack
  // (the daemon's mount and its threads, which do not exist in the child) and abort there.
  static int run_body(const std::function<int()>& body) {
    try {
      return body();
    } catch (const std::exception& error) {
      std::fprintf(stderr, "child %d threw: %s\n", getpid(), error.what());
    } catch (...) {
      std::fprintf(stderr, "child %d threw\n", getpid());
    }
    return kThrew;
  }

  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
};

// Pins the calling process to `cpu` (FUSE over io_uring queues a request on the ring of the CPU
// its caller runs on); -1 leaves it free.
void run_on(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

// The context manager of `device` in a child process, answering every call at once with an empty
// reply from its one looper thread. Returns once the role is taken.
std::unique_ptr<Child> start_call_server(const std::string& device, int cpu = -1) {
  int ready[2];
  if (pipe(ready) != 0) return nullptr;
  auto server = std::make_unique<Child>(
      [&] {
        run_on(cpu);
        client::ProcessOptions options;
        options.device = device;
        options.max_threads = 0;
        client::BinderProcess process(options);
        int result = process.become_context_manager(
            [](const client::IncomingTransaction&, client::Parcel&) { return client::kOk; });
        if (write(3, &result, sizeof result) != sizeof result || result != 0) return 1;
        client::IpcThread thread(process);
        thread.join_looper(true);
        return 0;
      },
      ready);
  close(ready[1]);
  int result = -1;
  bool ok = read(ready[0], &result, sizeof result) == sizeof result && result == 0;
  close(ready[0]);
  return ok ? std::move(server) : nullptr;
}

// `count` synchronous calls to handle 0 of `device` from a child process; exit status 0 if every
// call was answered kOk.
std::unique_ptr<Child> start_caller(const std::string& device, int count, int cpu = -1) {
  return std::make_unique<Child>([device, count, cpu] {
    run_on(cpu);
    client::ProcessOptions options;
    options.device = device;
    options.max_threads = 0;
    client::BinderProcess process(options);
    client::IpcThread thread(process);
    client::Parcel data;
    data.write_int32(42);
    for (int i = 0; i < count; ++i) {
      client::Parcel reply;
      if (thread.transact(0, 1, data, &reply) != client::kOk) return 1;
    }
    return 0;
  });
}

class BinderfsUringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!enable_fuse_uring()) GTEST_SKIP() << "this kernel's fuse has no enable_uring";
    mount_ =
        std::make_unique<testing::MountedBinderfs>(binderfs::FilesystemOptions{}, uring_mount());
  }

  // The ring is registered after INIT; the first requests may still come over /dev/fuse.
  void wait_for_ring(const BinderDevice& device) {
    for (int i = 0; i < 100 && mount_->filesystem().uring_ioctls() == 0; ++i) {
      ASSERT_EQ(device.version(), 8);
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_GT(mount_->filesystem().uring_ioctls(), 0u) << "requests did not come over io_uring";
  }

  // The context manager of "binder" in a child process, after it answered `count` calls from
  // another child; null (the test failed) if it could not.
  std::unique_ptr<Child> server_after_calls(int count) {
    auto server = start_call_server(mount_->path("binder"));
    if (!server) {
      ADD_FAILURE() << "the server could not become the context manager";
      return nullptr;
    }
    auto caller = start_caller(mount_->path("binder"), count);
    if (!caller->exited_within(30s)) {
      ADD_FAILURE() << "the call loop hung";
      return nullptr;
    }
    if (!WIFEXITED(caller->status()) || WEXITSTATUS(caller->status()) != 0) {
      ADD_FAILURE() << "a call failed";
      return nullptr;
    }
    return server;
  }

  std::unique_ptr<testing::MountedBinderfs> mount_;
};

// Threads that each park one read; whatever way the test ends, a flush completes the parked
// reads (S1.8) and every thread is joined (a joinable std::thread destroyed would terminate).
class ParkedReaders {
 public:
  ParkedReaders(const BinderDevice& device, int count) : device_(device), tids_(count) {
    for (int i = 0; i < count; ++i) {
      threads_.emplace_back([this, i] {
        read_once(device_);  // need_return: comes back at once
        tids_[i] = gettid();
        if (read_once(device_) == 0) ++woken_;
      });
    }
  }
  ~ParkedReaders() { wake_all(); }
  ParkedReaders(const ParkedReaders&) = delete;
  ParkedReaders& operator=(const ParkedReaders&) = delete;

  // True once every reader's read is parked in `mount`'s driver (bounded).
  bool all_parked(const testing::MountedBinderfs& mount) const {
    for (const auto& tid : tids_) {
      if (!testing::wait_until([&] { return tid != 0; }) ||
          !mount.wait_for_parked_read(getpid(), tid))
        return false;
    }
    return true;
  }
  // Flushes the device (completes every parked read from the flush's thread) and joins.
  int wake_all() {
    close(dup(device_.fd()));
    for (auto& thread : threads_)
      if (thread.joinable()) thread.join();
    return woken_;
  }

 private:
  const BinderDevice& device_;
  std::vector<std::atomic<pid_t>> tids_;  // each reader's, once its first read is done
  std::vector<std::thread> threads_;
  std::atomic<int> woken_{0};
};

// 96 parked reads (six libbinder pools; libfuse's own default depth is 8) leave the ring able to
// serve other requests, and a flush from another thread completes every one of them (S1.8).
TEST_F(BinderfsUringTest, ManyParkedReadsDoNotStarveTheRing) {
  BinderDevice device(mount_->path("binder"));
  wait_for_ring(device);

  constexpr int kReaders = 96;
  ParkedReaders readers(device, kReaders);
  ASSERT_TRUE(readers.all_parked(*mount_));
  // Other requests still get through while every reader is parked.
  for (int i = 0; i < 50; ++i) ASSERT_EQ(device.version(), 8);
  BinderDevice other(mount_->path("hwbinder"));
  EXPECT_EQ(other.version(), 8);
  EXPECT_EQ(readers.wake_all(), kReaders);
}

// A loop of real synchronous calls between two processes: every reply is delivered by the
// daemon thread serving the other process's ioctl, to a read parked on another ring queue.
TEST_F(BinderfsUringTest, ThousandsOfSyncCallsComplete) {
  BinderDevice probe(mount_->path("binder"));
  wait_for_ring(probe);
  EXPECT_TRUE(server_after_calls(3000));
}

// Two call pairs with crossed CPUs: each daemon thread that serves one ring delivers replies to
// reads parked on the other ring, at the same time as the other ring's thread does the reverse.
TEST_F(BinderfsUringTest, CallPairsOnCrossedCpusComplete) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two CPUs";
  BinderDevice probe(mount_->path("binder"));
  wait_for_ring(probe);
  auto server_a = start_call_server(mount_->path("hwbinder"), 1);
  auto server_b = start_call_server(mount_->path("vndbinder"), 0);
  ASSERT_TRUE(server_a && server_b) << "a server could not become the context manager";
  auto caller_a = start_caller(mount_->path("hwbinder"), 10000, 0);
  auto caller_b = start_caller(mount_->path("vndbinder"), 10000, 1);
  for (auto* caller : {caller_a.get(), caller_b.get()}) {
    ASSERT_TRUE(caller->exited_within(60s)) << "a call loop hung";
    EXPECT_TRUE(WIFEXITED(caller->status()) && WEXITSTATUS(caller->status()) == 0);
  }
}

// S1.12 / S1.9: a server killed while its looper is parked in a read exits. The kernel waits for
// the daemon's answer to a request it already handed over even for a SIGKILLed task, so the
// parked read must end (EINTR) for the process to die and its binder state to be released.
// bench-transport hung exactly here, killing its call servers after the io_uring rounds.
TEST_F(BinderfsUringTest, KilledServerParkedInReadExits) {
  BinderDevice probe(mount_->path("binder"));
  wait_for_ring(probe);
  auto server = server_after_calls(100);
  ASSERT_TRUE(server);
  ASSERT_TRUE(mount_->wait_for_open_procs(2));  // the server and the probe
  // Its looper is its main thread (tid == pid), parked again after the last reply.
  ASSERT_TRUE(mount_->wait_for_parked_read(server->pid(), server->pid()));

  kill(server->pid(), SIGKILL);
  ASSERT_TRUE(server->exited_within(5s)) << "the killed server is stuck in its parked read";
  EXPECT_TRUE(WIFSIGNALED(server->status()) && WTERMSIG(server->status()) == SIGKILL);
  EXPECT_TRUE(mount_->wait_for_open_procs(1)) << "the dead server's proc was not released";
}

// S1.12: a signal with a handler (no SA_RESTART) ends a parked read with EINTR.
TEST_F(BinderfsUringTest, SignalEndsParkedReadWithEintr) {
  BinderDevice device(mount_->path("binder"));
  wait_for_ring(device);
  struct sigaction action {};
  action.sa_handler = [](int) {};
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);

  std::atomic<pid_t> reader_tid{0};
  std::atomic<int> result{1};
  std::thread reader([&] {
    read_once(device);  // need_return: comes back at once
    reader_tid = gettid();
    result = read_once(device);
  });
  while (!reader_tid) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(mount_->wait_for_parked_read(getpid(), reader_tid)) << "the read never parked";
  pthread_kill(reader.native_handle(), SIGUSR1);
  bool ended = testing::wait_until([&] { return result != 1; }, 5s);
  if (!ended) close(dup(device.fd()));  // flush, so that the thread can be joined
  reader.join();
  sigaction(SIGUSR1, &previous, nullptr);
  ASSERT_TRUE(ended) << "the signal did not end the parked read";
  EXPECT_EQ(result.load(), -EINTR);
}

}  // namespace
}  // namespace cused
