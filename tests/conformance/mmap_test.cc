// SPDX-License-Identifier: GPL-2.0-only
// binder_mmap's refusals (S1.4) wherever cused can give them: on the kernel, under `cused run`
// (its filter shows the daemon a program's writable mmaps and mprotects, cused/run/vma_rules.h)
// and on CUSE (its shim asks the daemon). On the FUSE path the daemon never sees an mmap, a
// documented difference (docs/binderfs.md), so these tests skip there.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "client/cused_differences.h"
#include "tests/conformance/device_path.h"

namespace cused::conformance {
namespace {

constexpr std::size_t kMapSize = 128 * 1024;

#define SKIP_WHERE_MAPPINGS_ARE_NOT_SEEN()                                               \
  do {                                                                                   \
    if (client::served_by_cused(DevicePath()) && !client::under_cused_run())             \
      GTEST_SKIP() << "cused's FUSE path never sees mmap (S1.4): see docs/binderfs.md; " \
                      "`cused run` and CUSE enforce it";                                 \
  } while (0)

// An open of the device for the test, closed at its end.
class Node {
 public:
  explicit Node(int flags = O_RDWR) : fd_(open(DevicePath().c_str(), flags | O_CLOEXEC)) {}
  ~Node() {
    if (fd_ >= 0) close(fd_);
  }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// mmap of `node` with `prot` and `flags`: 0 (and the mapping, unmapped again) or the errno.
int MapError(const Node& node, int prot, int flags, void** kept = nullptr) {
  void* addr = mmap(nullptr, kMapSize, prot, flags, node.fd(), 0);
  if (addr == MAP_FAILED) return errno;
  if (kept)
    *kept = addr;
  else
    munmap(addr, kMapSize);
  return 0;
}

TEST(Mmap, WritableMappingFailsWithEpermAndLeavesTheOneMapping_S1_4) {
  SKIP_WHERE_MAPPINGS_ARE_NOT_SEEN();
  for (int type : {MAP_SHARED, MAP_PRIVATE}) {
    Node node;
    ASSERT_GE(node.fd(), 0) << std::strerror(errno);
    EXPECT_EQ(MapError(node, PROT_READ | PROT_WRITE, type), EPERM) << "map type " << type;
    EXPECT_EQ(MapError(node, PROT_WRITE, type), EPERM) << "map type " << type;
    // The refused mappings did not use up the proc's one mapping.
    EXPECT_EQ(MapError(node, PROT_READ, type), 0) << "map type " << type;
  }
}

TEST(Mmap, MappingCannotBeMadeWritable_S1_4) {
  SKIP_WHERE_MAPPINGS_ARE_NOT_SEEN();
  Node node;
  ASSERT_GE(node.fd(), 0) << std::strerror(errno);
  void* addr = nullptr;
  ASSERT_EQ(MapError(node, PROT_READ, MAP_SHARED, &addr), 0);
  EXPECT_EQ(mprotect(addr, kMapSize, PROT_READ | PROT_WRITE), -1);
  EXPECT_EQ(errno, EACCES);
  // One page of it, and a range that only begins below it, are refused alike.
  auto* first = static_cast<char*>(addr);
  EXPECT_EQ(mprotect(first + kMapSize - 4096, 4096, PROT_READ | PROT_WRITE), -1);
  EXPECT_EQ(errno, EACCES);
  EXPECT_EQ(mprotect(addr, kMapSize, PROT_READ), 0) << std::strerror(errno);  // no write: fine
  munmap(addr, kMapSize);
}

// The kernel's mm refuses a shared writable mapping of a descriptor opened read-only before
// binder_mmap runs: EACCES, not binder's EPERM. (CUSE's shim asks the daemon first: its EPERM is
// a documented difference, docs/binderfs.md.)
TEST(Mmap, SharedWritableMappingOfAReadOnlyOpenIsTheMmsEacces_S1_4) {
  SKIP_WHERE_MAPPINGS_ARE_NOT_SEEN();
  if (client::served_by_cuse(DevicePath()))
    GTEST_SKIP() << "the CUSE shim answers EPERM here (S1.4): see docs/cuse.md";
  Node node(O_RDONLY);
  ASSERT_GE(node.fd(), 0) << std::strerror(errno);
  EXPECT_EQ(MapError(node, PROT_READ | PROT_WRITE, MAP_SHARED), EACCES);
  EXPECT_EQ(MapError(node, PROT_READ | PROT_WRITE, MAP_PRIVATE), EPERM);  // private: binder's
}

// binder_mmap checks the caller's process before the flags: a child with its parent's open gets
// EINVAL for a writable mapping too, and cannot reach the parent's buffers through one.
TEST(Mmap, WritableMappingFromAnotherProcessIsEinval_S1_4) {
  SKIP_WHERE_MAPPINGS_ARE_NOT_SEEN();
  Node node;
  ASSERT_GE(node.fd(), 0) << std::strerror(errno);
  pid_t child = fork();
  if (child == 0) _exit(MapError(node, PROT_READ | PROT_WRITE, MAP_SHARED) == EINVAL ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child's writable mmap of its parent's open did not fail with EINVAL";
  EXPECT_EQ(MapError(node, PROT_READ, MAP_SHARED), 0);  // the owner's one mapping is still there
}

// Other files are not binder's: a writable mapping of a temporary file works as ever.
TEST(Mmap, WritableMappingsOfOtherFilesWork_S1_4) {
  char path[] = "/tmp/cused-mmap-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, kMapSize), 0);
  void* addr = mmap(nullptr, kMapSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(addr, MAP_FAILED) << std::strerror(errno);
  static_cast<char*>(addr)[0] = 1;
  EXPECT_EQ(mprotect(addr, kMapSize, PROT_READ), 0);
  EXPECT_EQ(mprotect(addr, kMapSize, PROT_READ | PROT_WRITE), 0) << std::strerror(errno);
  munmap(addr, kMapSize);
  close(fd);
}

}  // namespace
}  // namespace cused::conformance
