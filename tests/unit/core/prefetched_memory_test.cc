// The gathered reads under the engine's payload reads (cused/host/process_vm.h,
// core/prefetched_memory.h): what counts as read whole, and that a held copy answers only for
// the bytes it holds. A fault must stay a fault at the same step as a plain read (S4.11: EFAULT).
#include "core/prefetched_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "cused/host/process_vm.h"
#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

std::uint64_t address(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

// A page that can be read, followed by one that cannot.
class TwoPages : public ::testing::Test {
 protected:
  void SetUp() override {
    page_ = sysconf(_SC_PAGESIZE);
    void* mapped =
        mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mapped, MAP_FAILED);
    base_ = static_cast<std::byte*>(mapped);
    std::memset(base_, 0x5a, page_);
    ASSERT_EQ(mprotect(base_ + page_, page_, PROT_NONE), 0);
  }
  void TearDown() override { munmap(base_, 2 * page_); }

  std::size_t page_ = 0;
  std::byte* base_ = nullptr;
};

TEST_F(TwoPages, GatheredReadCountsTheRangesThatArrivedWhole_S4_11) {
  std::array<std::byte, 16> a{}, b{}, c{};
  const UserRange ranges[] = {{address(base_), a.data(), a.size()},
                              {address(base_ + page_ - 8), b.data(), b.size()},  // crosses
                              {address(base_ + 64), c.data(), c.size()}};
  EXPECT_EQ(host::process_vm_read_ranges(getpid(), ranges), 1u);
  EXPECT_EQ(a[0], std::byte{0x5a});
  const UserRange readable[] = {ranges[0], ranges[2], {0, nullptr, 0}};
  EXPECT_EQ(host::process_vm_read_ranges(getpid(), readable), 3u) << "an empty range is read whole";
}

TEST_F(TwoPages, HeldCopyAnswersOnlyInsideItself_S4_11) {
  SelfMemory self;
  PrefetchedMemory memory(self);
  std::array<std::byte, 32> copy{};
  const UserRange ranges[] = {{address(base_ + 100), copy.data(), copy.size()}};
  memory.prefetch(ranges);
  std::memset(base_ + 100, 0x11, 32);  // the caller changed it since: the held copy answers
  std::array<std::byte, 8> out{};
  ASSERT_EQ(memory.read(address(base_ + 108), out.data(), out.size()), 0);
  EXPECT_EQ(out[0], std::byte{0x5a});
  ASSERT_EQ(memory.read(address(base_ + 130), out.data(), out.size()), 0) << "past the copy";
  EXPECT_EQ(out[0], std::byte{0x11});
  EXPECT_EQ(memory.read(address(base_ + page_ - 4), out.data(), out.size()), -EFAULT);
}

TEST_F(TwoPages, PrefetchThatFaultsHoldsNothingAndTheStepFaultsLater_S4_11) {
  SelfMemory self;
  PrefetchedMemory memory(self);
  std::array<std::byte, 16> copy{};
  const UserRange ranges[] = {{address(base_ + page_ - 8), copy.data(), copy.size()}};
  memory.prefetch(ranges);
  std::array<std::byte, 4> out{};
  EXPECT_EQ(memory.read(address(base_ + page_ - 8), out.data(), out.size()), 0);
  EXPECT_EQ(memory.read(address(base_ + page_ - 8), copy.data(), copy.size()), -EFAULT);
}

TEST_F(TwoPages, WriteDropsTheHeldCopyItOverlaps_S4_11) {
  SelfMemory self;
  PrefetchedMemory memory(self);
  std::array<std::byte, 16> copy{};
  const UserRange ranges[] = {{address(base_), copy.data(), copy.size()}};
  memory.prefetch(ranges);
  const std::array<std::byte, 4> now{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  ASSERT_EQ(memory.write(address(base_ + 4), now.data(), now.size()), 0);
  std::array<std::byte, 4> out{};
  ASSERT_EQ(memory.read(address(base_ + 4), out.data(), out.size()), 0);
  EXPECT_EQ(out, now);
}

}  // namespace
}  // namespace cused::core::test
