// The S9 rules, one test each, for every variant (the rules do not depend on the locking).
#include "core/alloc/allocator.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <limits>

#include "tests/unit/alloc/fixture.h"

namespace cused::core::alloc::testing {
namespace {

class AllocatorTest : public ::testing::TestWithParam<Variant> {
 protected:
  PageLru lru;
};

TEST_P(AllocatorTest, S1_4_MapUsesAtMost4MiBAndOnlyOnce) {
  auto file = BufferFile::create("t", kMaxBufferSpace);
  Allocator alloc(*file, GetParam(), lru);
  EXPECT_EQ(alloc.map(64 << 20), 0);
  EXPECT_EQ(alloc.size(), kMaxBufferSpace);
  alloc.unmap();
  EXPECT_EQ(alloc.map(1 << 20), -EBUSY);  // even after munmap
}

TEST_P(AllocatorTest, S1_6_AllocationAfterUnmapFailsWithEsrchButFreeWorks) {
  TestProc proc(lru, GetParam(), 1 << 20);
  Buffer* before = proc.sync_buffer(100);
  ASSERT_NE(before, nullptr);
  proc.alloc->unmap();
  EXPECT_EQ(proc.alloc->new_buffer(100, 0, 0, false, 1).error, -ESRCH);
  proc.alloc->free_buffer(*before);
  EXPECT_EQ(proc.alloc->allocated_count(), 0u);
}

TEST_P(AllocatorTest, S1_7_AllocationBeforeMapFailsWithEsrch) {
  auto file = BufferFile::create("t", 1 << 20);
  Allocator alloc(*file, GetParam(), lru);
  EXPECT_EQ(alloc.new_buffer(8, 0, 0, false, 1).error, -ESRCH);
}

INSTANTIATE_TEST_SUITE_P(Variants, AllocatorTest, ::testing::ValuesIn(kAllVariants),
                         [](const auto& info) { return name_of(info.param); });

}  // namespace
}  // namespace cused::core::alloc::testing
