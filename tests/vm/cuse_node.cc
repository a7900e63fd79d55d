// SPDX-License-Identifier: GPL-2.0-only
// cuse_node DEVICE: what a CUSE node must do as the kernel's node does, beyond the conformance
// suite: binder_mmap's process rules (S1.4), which the shim keeps, a signal in a parked read
// (S1.12), which reaches cused as a CUSE interrupt and comes back through the unrestricted ioctl's
// copy-out, and what a client that bypasses the shim gets. Runs in the tests/vm guest on the
// kernel's /dev/binder and on cused's CUSE node with client/preload in LD_PRELOAD (docs/cuse.md),
// so that the answers are checked against the kernel's.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "client/cused_differences.h"
#include "client/preload/cuse_fd.h"
#include "uapi/binder.h"

namespace {

std::string g_device;  // set from the command line by main()

constexpr std::size_t kMapSize = 1u << 20;

int open_device() { return ::open(g_device.c_str(), O_RDWR | O_CLOEXEC); }

// Runs `body` in a forked child; true when it exited 0.
template <typename Body>
bool in_child(Body body) {
  pid_t child = fork();
  if (child == 0) _exit(body() ? 0 : 1);
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

TEST(Mmap, MmapFromAProcessThatDidNotOpenFailsWithEinval_S1_4) {
  CUSED_SKIP_WHERE_CUSED_DIFFERS(g_device, "S1.4");
  int fd = open_device();
  ASSERT_GE(fd, 0) << std::strerror(errno);
  EXPECT_TRUE(in_child([fd] {
    void* addr = mmap(nullptr, kMapSize, PROT_READ, MAP_PRIVATE, fd, 0);
    return addr == MAP_FAILED && errno == EINVAL;
  })) << "the child's mmap of the parent's open did not fail with EINVAL";
  // ... and the refusal did not use up the owner's one mapping.
  void* addr = mmap(nullptr, kMapSize, PROT_READ, MAP_PRIVATE, fd, 0);
  EXPECT_NE(addr, MAP_FAILED) << std::strerror(errno);
  if (addr != MAP_FAILED) munmap(addr, kMapSize);
  close(fd);
}

TEST(Mmap, ChildDoesNotInheritTheMapping_S1_4) {
  CUSED_SKIP_WHERE_CUSED_DIFFERS(g_device, "S1.4");
  int fd = open_device();
  ASSERT_GE(fd, 0) << std::strerror(errno);
  void* addr = mmap(nullptr, kMapSize, PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(addr, MAP_FAILED) << std::strerror(errno);
  // VM_DONTCOPY: in the child the range is not mapped at all (msync says ENOMEM).
  EXPECT_TRUE(in_child([addr] { return msync(addr, kMapSize, MS_ASYNC) != 0 && errno == ENOMEM; }));
  EXPECT_EQ(msync(addr, kMapSize, MS_ASYNC), 0);
  munmap(addr, kMapSize);
  close(fd);
}

TEST(Mmap, RawMmapOfACuseNodeFailsWithEnodev) {
  int fd = open_device();
  ASSERT_GE(fd, 0) << std::strerror(errno);
  char name[256];
  if (!cused::preload::cuse_device_name(fd, "/sys", name, sizeof name)) {
    close(fd);
    GTEST_SKIP() << g_device << " is not a CUSE device";
  }
  // What a client without the shim gets: CUSE has no mmap.
  long result = syscall(SYS_mmap, nullptr, kMapSize, PROT_READ, MAP_PRIVATE, fd, 0);
  EXPECT_EQ(result, -1);
  EXPECT_EQ(errno, ENODEV);
  close(fd);
}

// One BINDER_WRITE_READ of `write` (may be empty) and a read into `buffer`: 0 or -errno.
int write_read(int fd, std::uint32_t* write, std::size_t write_words, std::uint32_t (&buffer)[16],
               binder_write_read& bwr) {
  bwr = {};
  bwr.write_size = write_words * sizeof(std::uint32_t);
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(write);
  bwr.read_size = sizeof buffer;
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(buffer);
  return ioctl(fd, BINDER_WRITE_READ, &bwr) == 0 ? 0 : -errno;
}

TEST(Signals, SignalEndsAParkedReadWithEintrAndNothingConsumed_S1_12) {
  struct sigaction action {};
  action.sa_handler = [](int) {};  // no SA_RESTART: the ioctl must come back
  sigaction(SIGUSR1, &action, nullptr);
  int fd = open_device();
  ASSERT_GE(fd, 0) << std::strerror(errno);
  void* addr = mmap(nullptr, kMapSize, PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(addr, MAP_FAILED) << std::strerror(errno);
  std::atomic<bool> done{false};
  int result = 0;
  binder_write_read bwr{};
  std::thread reader([&] {
    std::uint32_t buffer[16];
    std::uint32_t enter = BC_ENTER_LOOPER;
    write_read(fd, &enter, 1, buffer, bwr);  // a new thread's first read returns at once
    result = write_read(fd, nullptr, 0, buffer, bwr);
    done = true;
  });
  // A signal that lands before the reader parks is lost: send until the read has ended.
  for (int i = 0; i < 100 && !done; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!done) pthread_kill(reader.native_handle(), SIGUSR1);
  }
  ASSERT_TRUE(done.load()) << "the parked read did not end on a signal";
  reader.join();
  EXPECT_EQ(result, -EINTR);
  EXPECT_EQ(bwr.read_consumed, 0u);  // copied back with the error, S1.12
  EXPECT_EQ(bwr.read_size, 64u);
  signal(SIGUSR1, SIG_DFL);
  munmap(addr, kMapSize);
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
    return 2;
  }
  g_device = argv[1];
  return RUN_ALL_TESTS();
}
