// SPDX-License-Identifier: GPL-2.0-only
// The daemon's reads of a caller's memory (cused/host/process_vm.h): what counts as read whole,
// and that core's unit tests' fake user memory (tests/unit/fake_user_memory.h) answers as these
// system calls do for the addresses those tests use, so a fault stays a fault at the same step
// (S4.11: EFAULT).
#include "cused/host/process_vm.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "tests/unit/fake_user_memory.h"

namespace cused::host {
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
  const core::UserRange ranges[] = {{address(base_), a.data(), a.size()},
                                    {address(base_ + page_ - 8), b.data(), b.size()},  // crosses
                                    {address(base_ + 64), c.data(), c.size()}};
  EXPECT_EQ(process_vm_read_ranges(getpid(), ranges), 1u);
  EXPECT_EQ(a[0], std::byte{0x5a});
  const core::UserRange readable[] = {ranges[0], ranges[2], {0, nullptr, 0}};
  EXPECT_EQ(process_vm_read_ranges(getpid(), readable), 3u) << "an empty range is read whole";
}

// The run frontend's write of a read buffer with its binder_write_read (issue 30): one system
// call, and the ranges after the first that faults are not written (the struct is never copied
// back before a buffer that could not be).
TEST_F(TwoPages, GatheredWriteStopsAtTheFirstRangeNotWrittenWhole_S3_2) {
  const std::array<std::byte, 16> ones{std::byte{1}}, twos{std::byte{2}};
  const core::UserWriteRange ranges[] = {{address(base_ + 128), twos.data(), twos.size()},
                                         {address(base_ + page_ - 8), ones.data(), ones.size()},
                                         {address(base_ + 64), ones.data(), ones.size()}};
  std::uint64_t before = remote_accesses();
  EXPECT_EQ(process_vm_write_ranges(getpid(), ranges), 1u);
  EXPECT_EQ(remote_accesses(), before + 1);
  EXPECT_EQ(base_[128], std::byte{2});
  EXPECT_EQ(base_[64], std::byte{0x5a}) << "a range after the fault was written";
  const core::UserWriteRange writable[] = {ranges[0], ranges[2]};
  EXPECT_EQ(process_vm_write_ranges(getpid(), writable), 2u);
  EXPECT_EQ(base_[64], std::byte{1});
}

// The fake, told that the second page cannot be read, answers every read, write and gathered
// read of these addresses as the system calls do: the null page, a range crossing into the
// unreadable page, one inside it, empty ranges anywhere, readable ones.
TEST_F(TwoPages, FakeUserMemoryAnswersAsTheSystemCalls_S4_11) {
  testing::FakeAddressSpace space;
  space.forbid(base_ + page_, page_);
  testing::FakeUserMemory fake(space);
  const std::uint64_t addresses[] = {0x10, address(base_), address(base_ + page_ - 8),
                                     address(base_ + page_ - 16), address(base_ + page_ + 8)};
  constexpr std::size_t kLengths[] = {0, 8, 16};
  for (std::uint64_t addr : addresses) {
    for (std::size_t len : kLengths) {
      std::array<std::byte, 16> real{}, faked{};
      EXPECT_EQ(fake.read(addr, faked.data(), len),
                process_vm_read(getpid(), addr, real.data(), len))
          << std::hex << addr << " " << len;
      EXPECT_EQ(faked, real) << std::hex << addr << " " << len;
      EXPECT_EQ(fake.write(addr, faked.data(), len),
                process_vm_write(getpid(), addr, faked.data(), len))
          << std::hex << addr << " " << len;
    }
  }
  std::array<std::byte, 16> a{}, b{}, c{};
  for (std::uint64_t bad : addresses) {
    for (std::size_t len : kLengths) {
      const core::UserRange ranges[] = {{address(base_), a.data(), a.size()},
                                        {bad, b.data(), len},
                                        {address(base_ + 64), c.data(), c.size()}};
      EXPECT_EQ(fake.read_ranges(ranges), process_vm_read_ranges(getpid(), ranges))
          << std::hex << bad << " " << len;
    }
  }
}

}  // namespace
}  // namespace cused::host
