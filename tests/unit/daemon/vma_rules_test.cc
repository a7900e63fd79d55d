// SPDX-License-Identifier: GPL-2.0-only
// binder_mmap's answers as `cused run` gives them to a program's memory calls (cused/run/
// vma_rules.h, issue 47 point 4): the kernel's errors in the kernel's order (S1.4).
#include "cused/run/vma_rules.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace cused::run {
namespace {

constexpr std::uint64_t kLength = 1 << 20;

TEST(VmaRulesTest, WritableMappingOfTheOpenersNodeIsEperm_S1_4) {
  for (int type : {MAP_SHARED, MAP_PRIVATE, MAP_SHARED_VALIDATE})
    EXPECT_EQ(binder_mmap_answer({kLength, PROT_READ | PROT_WRITE, type, 0}, O_RDWR, true), -EPERM)
        << "map type " << type;
  EXPECT_EQ(binder_mmap_answer({kLength, PROT_WRITE, MAP_PRIVATE, 0}, O_RDWR, true), -EPERM);
}

TEST(VmaRulesTest, ReadableMappingGoesOnToTheKernel_S1_4) {
  EXPECT_EQ(binder_mmap_answer({kLength, PROT_READ, MAP_SHARED, 0}, O_RDWR, true), 0);
  EXPECT_EQ(binder_mmap_answer({kLength, PROT_READ, MAP_PRIVATE, 0}, O_RDONLY, true), 0);
}

// binder_mmap looks at the caller's process before the flags: EINVAL even for a writable one.
TEST(VmaRulesTest, AnotherProcessGetsEinvalBeforeTheWriteCheck_S1_4) {
  EXPECT_EQ(binder_mmap_answer({kLength, PROT_READ | PROT_WRITE, MAP_SHARED, 0}, O_RDWR, false),
            -EINVAL);
}

// The kernel's mm fails these before binder_mmap runs; the FUSE node gets the same answer from
// it, so the call goes on to the kernel (0 here).
TEST(VmaRulesTest, ChecksOfTheKernelsMmComeFirst_S1_4) {
  const int rw = PROT_READ | PROT_WRITE;
  EXPECT_EQ(binder_mmap_answer({0, rw, MAP_SHARED, 0}, O_RDWR, true), 0);          // EINVAL
  EXPECT_EQ(binder_mmap_answer({kLength, rw, MAP_SHARED, 100}, O_RDWR, true), 0);  // EINVAL
  EXPECT_EQ(binder_mmap_answer({kLength, rw, MAP_SHARED, 0}, O_RDONLY, true), 0);  // EACCES
  EXPECT_EQ(binder_mmap_answer({kLength, rw, MAP_SHARED_VALIDATE, 0}, O_RDONLY, true), 0);
  EXPECT_EQ(binder_mmap_answer({kLength, rw, MAP_PRIVATE, 0}, O_WRONLY, true), 0);  // EACCES
  EXPECT_EQ(binder_mmap_answer({kLength, rw, 0, 0}, O_RDWR, true), 0);  // no map type: EINVAL
  // A private writable mapping of a read-only descriptor passes the mm and meets binder's rule.
  EXPECT_EQ(binder_mmap_answer({kLength, rw, MAP_PRIVATE, 0}, O_RDONLY, true), -EPERM);
}

TEST(VmaRulesTest, MprotectReachesABinderMappingWhereTheRangesOverlap_S1_4) {
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  const std::uint64_t begin = 100 * page, end = begin + kLength;
  EXPECT_TRUE(mprotect_reaches(begin, page, begin, end));
  EXPECT_TRUE(mprotect_reaches(end - page, page, begin, end));
  EXPECT_TRUE(mprotect_reaches(begin - page, 2 * page, begin, end));     // from below, into it
  EXPECT_TRUE(mprotect_reaches(0, 1000 * page, begin, end));             // around it
  EXPECT_FALSE(mprotect_reaches(begin - page, page, begin, end));        // the page below
  EXPECT_FALSE(mprotect_reaches(end, page, begin, end));                 // the page above
  EXPECT_FALSE(mprotect_reaches(begin, 0, begin, end));                  // nothing to do
  EXPECT_FALSE(mprotect_reaches(begin + 1, page, begin, end));           // EINVAL first
  EXPECT_FALSE(mprotect_reaches(begin, ~std::uint64_t{0}, begin, end));  // wraps: ENOMEM first
}

TEST(VmaRulesTest, DescriptorAccessModeIsHowItWasOpened) {
  for (int mode : {O_RDONLY, O_WRONLY, O_RDWR}) {
    int fd = open("/dev/null", mode | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(descriptor_access_mode(gettid(), fd), mode);
    close(fd);
  }
  EXPECT_EQ(descriptor_access_mode(gettid(), 1 << 20), -1);
}

}  // namespace
}  // namespace cused::run
