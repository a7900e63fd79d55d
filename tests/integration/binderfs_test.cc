// SPDX-License-Identifier: GPL-2.0-only
// The binderfs frontend end to end: a client's syscalls on a mounted node reach core and come
// back (issue 2). Each test names the spec rule it checks.
#include <dirent.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <vector>

#include "client/binder_device.h"
#include "core/proc.h"
#include "tests/integration/mounted_binderfs.h"

namespace cused {
namespace {

using client::BinderDevice;
using testing::MountedBinderfs;

// A read of up to 16 words into `words`; returns the ioctl result (0 or -errno).
int read_words(const BinderDevice& device, std::uint32_t (&words)[16], binder_write_read& bwr) {
  bwr = {};
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
  bwr.read_size = sizeof words;
  return device.write_read(bwr);
}

std::set<std::string> list_dir(const std::string& path) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path))
    names.insert(entry.path().filename().string());
  return names;
}

std::size_t count_open_fds() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++count;
  return count;
}

// The procs' buffer files (one memfd per open, docs/design.md section 2) that this process, the
// daemon, holds.
std::size_t count_open_memfds() {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    if (std::filesystem::read_symlink(entry.path(), error).string().starts_with("/memfd:")) ++count;
  }
  return count;
}

class BinderfsTest : public ::testing::Test {
 protected:
  MountedBinderfs mount_;
};

// S10.2: the initial content of a binderfs mount.
TEST_F(BinderfsTest, S10_2_RootListsDevicesControlAndFeatures) {
  EXPECT_EQ(list_dir(mount_.dir()),
            (std::set<std::string>{"binder", "hwbinder", "vndbinder", "binder-control", "features",
                                   "binder_logs"}));
  struct stat st;
  ASSERT_EQ(stat(mount_.path("binder").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(stat(mount_.path("binder-control").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// S10.5: features/ lists what the engine implements, each file reading "1\n".
TEST_F(BinderfsTest, S10_5_FeaturesListImplementedProtocol) {
  EXPECT_EQ(list_dir(mount_.path("features")),
            (std::set<std::string>{"oneway_spam_detection", "extended_error", "freeze_notification",
                                   "defer_complete"}));
  std::ifstream feature(mount_.path("features/defer_complete"));
  std::string content((std::istreambuf_iterator<char>(feature)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "1\n");
}

// S2.7 and S2.0: BINDER_VERSION answers protocol 8; an unknown request is EINVAL.
TEST_F(BinderfsTest, S2_7_VersionIs8_AndUnknownIoctlIsEinval) {
  BinderDevice device(mount_.path("binder"));
  EXPECT_EQ(device.version(), 8);
  EXPECT_EQ(device.ioctl(_IO('b', 99), nullptr), -EINVAL);
  std::int64_t timeout = 1;
  EXPECT_EQ(device.ioctl(BINDER_SET_IDLE_TIMEOUT, &timeout), -EINVAL);
}

// S3.2: every read starts with BR_NOOP; a new thread's first read returns at once (S2.0).
TEST_F(BinderfsTest, S3_2_FirstReadOfNewThreadReturnsNoop) {
  BinderDevice device(mount_.path("binder"));
  std::uint32_t words[16] = {};
  binder_write_read bwr;
  ASSERT_EQ(read_words(device, words, bwr), 0);
  EXPECT_EQ(bwr.read_consumed, 4u);
  EXPECT_EQ(words[0], static_cast<std::uint32_t>(BR_NOOP));
}

// docs/design.md section 2 / S1.4: the client's mapping is the daemon's memfd: a byte the daemon
// writes into the proc's buffer space is seen through the client's mmap, and punching the page
// (the shrinker's reclaim) takes it away from both and leaves no resident page.
TEST_F(BinderfsTest, MmapSharesTheProcsMemfd_AndPunchedPageIsGone) {
  BinderDevice device(mount_.path("binder"));
  ASSERT_EQ(device.map(), 0);
  constexpr std::size_t kOffset = 5 * 4096 + 123;
  int procs = 0;
  mount_.registry().for_each_proc_of(getpid(), [&](core::Proc& proc) {
    proc.buffers().data()[kOffset] = std::byte{0x5a};
    ++procs;
  });
  ASSERT_EQ(procs, 1);
  EXPECT_EQ(device.mapping()[kOffset], std::byte{0x5a});

  mount_.registry().for_each_proc_of(getpid(), [&](core::Proc& proc) {
    EXPECT_TRUE(proc.buffers().page_resident(5 * 4096));
    EXPECT_EQ(proc.buffers().punch_hole(5 * 4096, 4096), 0);
    EXPECT_FALSE(proc.buffers().page_resident(5 * 4096));
  });
  EXPECT_EQ(device.mapping()[kOffset], std::byte{0});
}

// S1.1: two opens are two procs with independent buffer spaces.
TEST_F(BinderfsTest, S1_1_TwoOpensHaveIndependentBuffers) {
  BinderDevice first(mount_.path("binder"));
  BinderDevice second(mount_.path("binder"));
  ASSERT_EQ(first.map(), 0);
  ASSERT_EQ(second.map(), 0);
  std::vector<core::Proc*> procs;
  mount_.registry().for_each_proc_of(getpid(), [&](core::Proc& proc) { procs.push_back(&proc); });
  ASSERT_EQ(procs.size(), 2u);
  procs[0]->buffers().data()[100] = std::byte{1};
  procs[1]->buffers().data()[100] = std::byte{2};
  std::set<std::byte> seen{first.mapping()[100], second.mapping()[100]};
  EXPECT_EQ(seen, (std::set<std::byte>{std::byte{1}, std::byte{2}}));
}

// S1.1 under load: 1,000 opens from 8 threads each get their own working mapping, and when they
// are closed the daemon keeps no fd, memfd or proc.
TEST_F(BinderfsTest, S1_1_ThousandConcurrentOpensLeakNothing) {
  // Warm up lazily created daemon state (threads, fds) before taking the baseline.
  { BinderDevice warmup(mount_.path("binder")); }
  ASSERT_TRUE(mount_.wait_for_open_procs(0));
  // The warmup proc's memfd is closed at the very end of its release, which FUSE runs after
  // close() returned: the baseline must not count it.
  ASSERT_TRUE(testing::wait_until([] { return count_open_memfds() == 0; }));
  std::size_t baseline_fds = count_open_fds();

  constexpr int kThreads = 8, kOpensPerThread = 125;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kOpensPerThread; ++i) {
        BinderDevice device(mount_.path(i % 2 ? "binder" : "hwbinder"));
        if (device.map(64 * 1024) != 0 || device.version() != 8) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(mount_.wait_for_open_procs(0));
  // FUSE releases asynchronously after close(): give the last releases a moment to finish.
  for (int i = 0; i < 200 && count_open_fds() != baseline_fds; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(count_open_fds(), baseline_fds);
}

void ignore_signal(int) {}

// S1.12: a read blocked with no work fails with EINTR when a signal interrupts it.
TEST_F(BinderfsTest, S1_12_SignalInterruptsBlockedRead) {
  struct sigaction action = {};
  action.sa_handler = ignore_signal;  // no SA_RESTART: the ioctl must come back
  sigaction(SIGUSR1, &action, nullptr);
  BinderDevice device(mount_.path("binder"));
  std::atomic<pid_t> reader_tid{0};
  int result = 0;
  std::thread reader([&] {
    std::uint32_t words[16];
    binder_write_read bwr;
    read_words(device, words, bwr);  // first read of a new thread: returns at once
    reader_tid = gettid();
    result = read_words(device, words, bwr);
  });
  while (!reader_tid) std::this_thread::yield();
  const bool parked = mount_.wait_for_parked_read(getpid(), reader_tid);
  if (parked)
    pthread_kill(reader.native_handle(), SIGUSR1);
  else
    close(dup(device.fd()));  // a flush ends the read, so that the thread can be joined
  reader.join();
  signal(SIGUSR1, SIG_DFL);
  ASSERT_TRUE(parked) << "the read never parked";
  EXPECT_EQ(result, -EINTR);
}

// S1.11: with O_NONBLOCK a read that finds no work is EAGAIN, read_consumed unchanged.
TEST_F(BinderfsTest, S1_11_NonblockingReadIsEagain) {
  BinderDevice device(mount_.path("binder"), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  std::uint32_t words[16];
  binder_write_read bwr;
  ASSERT_EQ(read_words(device, words, bwr), 0);  // need_return: BR_NOOP at once
  EXPECT_EQ(read_words(device, words, bwr), -EAGAIN);
  EXPECT_EQ(bwr.read_consumed, 0u);
}

// S1.10: a brand-new thread polls readable at once; once its first read is done and there is no
// work, it does not.
TEST_F(BinderfsTest, S1_10_PollReadableForNewThreadOnly) {
  BinderDevice device(mount_.path("binder"));
  pollfd fds{device.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&fds, 1, 0), 1);
  EXPECT_TRUE(fds.revents & POLLIN);
  EXPECT_FALSE(fds.revents & POLLOUT);  // never EPOLLOUT
  std::uint32_t words[16];
  binder_write_read bwr;
  ASSERT_EQ(read_words(device, words, bwr), 0);
  fds.revents = 0;
  EXPECT_EQ(::poll(&fds, 1, 0), 0);
}

// S1.8: closing any fd of the file (here a dup) wakes a blocked reader with only BR_NOOP.
TEST_F(BinderfsTest, S1_8_FlushWakesBlockedReader) {
  BinderDevice device(mount_.path("binder"));
  std::atomic<pid_t> reader_tid{0};
  int result = -1;
  binder_write_read bwr{};
  std::uint32_t words[16] = {};
  std::thread reader([&] {
    read_words(device, words, bwr);
    reader_tid = gettid();
    result = read_words(device, words, bwr);
  });
  while (!reader_tid) std::this_thread::yield();
  EXPECT_TRUE(mount_.wait_for_parked_read(getpid(), reader_tid)) << "the read never parked";
  close(dup(device.fd()));
  reader.join();
  EXPECT_EQ(result, 0);
  EXPECT_EQ(bwr.read_consumed, 4u);
  EXPECT_EQ(words[0], static_cast<std::uint32_t>(BR_NOOP));
}

// S1.3: the fd is the opener's; another process using it (after fork) gets EINVAL.
TEST_F(BinderfsTest, S1_3_OtherThreadGroupGetsEinval) {
  BinderDevice device(mount_.path("binder"));
  pid_t child = fork();
  if (child == 0) {
    binder_version version{};
    int result = ::ioctl(device.fd(), BINDER_VERSION, &version);
    _exit(result == -1 && errno == EINVAL ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(device.version(), 8);
}

// S1.9: a client killed while its read is parked: the daemon releases its proc and the mount
// keeps working.
TEST_F(BinderfsTest, S1_9_KilledClientWithParkedReadIsReleased) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  if (child == 0) {
    BinderDevice device(mount_.path("binder"));
    device.map();
    std::uint32_t words[16];
    binder_write_read bwr;
    read_words(device, words, bwr);
    char byte = 1;
    [[maybe_unused]] auto written = write(ready[1], &byte, 1);
    read_words(device, words, bwr);  // parks until killed
    _exit(0);
  }
  close(ready[1]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  EXPECT_TRUE(mount_.wait_for_parked_read(child, child)) << "the child's read never parked";
  EXPECT_EQ(mount_.registry().open_procs(), 1u);
  kill(child, SIGKILL);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(mount_.wait_for_open_procs(0));
  BinderDevice device(mount_.path("binder"));
  EXPECT_EQ(device.version(), 8);
}

// S10.3: BINDER_CTL_ADD creates a working device; binderfs's errors for bad or taken names.
TEST_F(BinderfsTest, S10_3_BinderControlAddsDevices) {
  BinderDevice control(mount_.path("binder-control"));
  binderfs_device request{};
  std::strcpy(request.name, "extra");
  ASSERT_EQ(control.ioctl(BINDER_CTL_ADD, &request), 0);
  EXPECT_TRUE(list_dir(mount_.dir()).count("extra"));
  {
    BinderDevice extra(mount_.path("extra"));
    EXPECT_EQ(extra.version(), 8);
    EXPECT_EQ(extra.map(), 0);
  }
  EXPECT_EQ(control.ioctl(BINDER_CTL_ADD, &request), -EEXIST);
  std::strcpy(request.name, "binder");
  EXPECT_EQ(control.ioctl(BINDER_CTL_ADD, &request), -EEXIST);
  for (const char* bad : {"", ".", "..", "a/b"}) {
    std::strcpy(request.name, bad);
    EXPECT_EQ(control.ioctl(BINDER_CTL_ADD, &request), -EACCES) << '"' << bad << '"';
  }
  // Force-terminated at byte 255: an unterminated 256-byte name is cut, not overrun.
  std::memset(request.name, 'x', sizeof request.name);
  ASSERT_EQ(control.ioctl(BINDER_CTL_ADD, &request), 0);
  EXPECT_TRUE(list_dir(mount_.dir()).count(std::string(255, 'x')));
  std::uint32_t version = 0;
  EXPECT_EQ(control.ioctl(BINDER_VERSION, &version), -EINVAL);  // any other ioctl
}

// Sends an empty sync transaction to handle 0 and returns the BR_ codes of the first read
// (BR_NOOP first).
std::vector<std::uint32_t> call_context_manager(const BinderDevice& client) {
  struct __attribute__((packed)) {
    std::uint32_t cmd = BC_TRANSACTION;
    binder_transaction_data tr{};
  } write;
  write.tr.target.handle = 0;
  std::uint32_t words[64] = {};  // more than the 76 bytes a read needs to return an item (S3.2)
  binder_write_read bwr{};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(&write);
  bwr.write_size = sizeof write;
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
  bwr.read_size = sizeof words;
  if (client.write_read(bwr) != 0) return {};
  return std::vector<std::uint32_t>(words, words + bwr.read_consumed / 4);
}

// S1.4 / docs/binderfs.md: the kernel refuses a writable mapping; cused cannot, so a proc whose
// mapping is writable counts as unmapped (S1.6): transactions to it fail with BR_DEAD_REPLY,
// while the same call to a read-only mapping is delivered.
TEST_F(BinderfsTest, S1_4_WritableMappingCountsAsUnmapped) {
  for (bool writable : {false, true}) {
    // The manager is another process: a call to handle 0 from the manager's own process is
    // refused (S4.1).
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    std::string device = mount_.path(writable ? "hwbinder" : "binder");
    pid_t manager = fork();
    if (manager == 0) {
      BinderDevice node(device);
      std::int32_t unused = 0;
      bool ok = node.ioctl(BINDER_SET_CONTEXT_MGR, &unused) == 0 &&
                mmap(nullptr, 128 * 1024, writable ? PROT_READ | PROT_WRITE : PROT_READ,
                     writable ? MAP_SHARED : MAP_PRIVATE, node.fd(), 0) != MAP_FAILED;
      char byte = ok ? 1 : 0;
      [[maybe_unused]] auto written = write(ready[1], &byte, 1);
      pause();
      _exit(0);
    }
    close(ready[1]);
    char byte = 0;
    ASSERT_EQ(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    ASSERT_EQ(byte, 1);
    BinderDevice client(device);
    ASSERT_EQ(client.map(), 0);
    auto codes = call_context_manager(client);
    kill(manager, SIGKILL);
    waitpid(manager, nullptr, 0);
    ASSERT_GE(codes.size(), 2u);
    EXPECT_EQ(codes[0], static_cast<std::uint32_t>(BR_NOOP));
    if (writable)
      EXPECT_EQ(codes[1], static_cast<std::uint32_t>(BR_DEAD_REPLY));
    else
      EXPECT_EQ(codes[1], static_cast<std::uint32_t>(BR_TRANSACTION_COMPLETE));
  }
}
}  // namespace
}  // namespace cused
