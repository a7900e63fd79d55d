// cuse_mmap DEVICE: binder_mmap's process rules (S1.4) on any binder node, and what a CUSE node
// does to a client that bypasses the shim. Runs in the tests/vm guest on the kernel's /dev/binder
// and on cused's CUSE node with client/preload in LD_PRELOAD (docs/cuse.md), so that the shim's
// answers are checked against the kernel's.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "client/cused_differences.h"
#include "client/preload/cuse_fd.h"

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
