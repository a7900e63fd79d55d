// SPDX-License-Identifier: GPL-2.0-only
// A held copy of the caller's memory (core/prefetched_memory.h) answers only for the bytes it
// holds, and a fault must stay a fault at the same step as a plain read (S4.11: EFAULT). The
// gathered read under it is the daemon's process_vm_read_ranges
// (tests/unit/host/process_vm_test.cc); here the caller's memory is the fake's
// (tests/unit/fake_user_memory.h), which answers as it does.
#include "core/prefetched_memory.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "tests/unit/fake_user_memory.h"

namespace cused::core::test {
namespace {

std::uint64_t address(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

// A page that can be read, followed by one that cannot (as if PROT_NONE).
class TwoPages : public ::testing::Test {
 protected:
  static constexpr std::size_t kPage = 4096;
  void SetUp() override {
    std::memset(base_, 0x5a, kPage);
    space_.forbid(base_ + kPage, kPage);
  }

  std::vector<std::byte> pages_ = std::vector<std::byte>(2 * kPage);
  std::byte* const base_ = pages_.data();
  testing::FakeAddressSpace space_;
  testing::FakeUserMemory self_{space_};
};

TEST_F(TwoPages, HeldCopyAnswersOnlyInsideItself_S4_11) {
  PrefetchedMemory memory(self_);
  std::array<std::byte, 32> copy{};
  const UserRange ranges[] = {{address(base_ + 100), copy.data(), copy.size()}};
  memory.prefetch(ranges);
  std::memset(base_ + 100, 0x11, 32);  // the caller changed it since: the held copy answers
  std::array<std::byte, 8> out{};
  ASSERT_EQ(memory.read(address(base_ + 108), out.data(), out.size()), 0);
  EXPECT_EQ(out[0], std::byte{0x5a});
  ASSERT_EQ(memory.read(address(base_ + 130), out.data(), out.size()), 0) << "past the copy";
  EXPECT_EQ(out[0], std::byte{0x11});
  EXPECT_EQ(memory.read(address(base_ + kPage - 4), out.data(), out.size()), -EFAULT);
}

TEST_F(TwoPages, PrefetchThatFaultsHoldsNothingAndTheStepFaultsLater_S4_11) {
  PrefetchedMemory memory(self_);
  std::array<std::byte, 16> copy{};
  const UserRange ranges[] = {{address(base_ + kPage - 8), copy.data(), copy.size()}};
  memory.prefetch(ranges);
  std::array<std::byte, 4> out{};
  EXPECT_EQ(memory.read(address(base_ + kPage - 8), out.data(), out.size()), 0);
  EXPECT_EQ(memory.read(address(base_ + kPage - 8), copy.data(), copy.size()), -EFAULT);
}

TEST_F(TwoPages, WriteDropsTheHeldCopyItOverlaps_S4_11) {
  PrefetchedMemory memory(self_);
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
