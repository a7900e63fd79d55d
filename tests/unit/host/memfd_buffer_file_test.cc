// SPDX-License-Identifier: GPL-2.0-only
// The daemon's buffer store (cused/host/memfd_buffer_file.h): the page size core's allocator
// counts in, and populate()'s guarantee that the allocator's page install relies on: a hole
// becomes a resident zero page, a resident page keeps every byte.
#include "cused/host/memfd_buffer_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "tests/unit/fake_buffer_file.h"

namespace cused::host {
namespace {

bool all_are(const std::byte* start, std::size_t len, std::byte value) {
  return std::all_of(start, start + len, [value](std::byte b) { return b == value; });
}

TEST(MemfdBufferFile, PageSizeIsTheOsPage) {
  auto file = MemfdBufferFile::create("cused-host-test", 1 << 16);
  EXPECT_EQ(file->page_size(), static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
}

TEST(MemfdBufferFile, PopulateRefillsAPunchedPageAndKeepsItsResidentNeighbour) {
  auto file = MemfdBufferFile::create("cused-host-test", 1 << 16);
  const std::size_t page = file->page_size();
  std::byte* data = file->data();
  std::fill_n(data, page, std::byte{0x5a});
  std::fill_n(data + page, page, std::byte{0xa5});
  ASSERT_EQ(file->resident_pages(0, 2 * page), 2);

  ASSERT_EQ(file->punch_hole(page, page), 0);
  ASSERT_FALSE(file->page_resident(page));
  ASSERT_EQ(file->resident_pages(0, 2 * page), 1);

  // One call over both pages, as the allocator makes it for a run of missing pages that shares
  // its first page with a neighbouring buffer.
  ASSERT_EQ(file->populate(0, 2 * page), 0);
  EXPECT_TRUE(file->page_resident(page));
  EXPECT_EQ(file->resident_pages(0, 2 * page), 2);
  EXPECT_TRUE(all_are(data, page, std::byte{0x5a}));
  EXPECT_TRUE(all_are(data + page, page, std::byte{0}));
  // The file holds the same bytes as the daemon's mapping (the client maps the file).
  std::vector<std::byte> on_file(2 * page);
  ASSERT_EQ(pread(file->fd(), on_file.data(), on_file.size(), 0),
            static_cast<ssize_t>(on_file.size()));
  EXPECT_TRUE(all_are(on_file.data(), page, std::byte{0x5a}));
  EXPECT_TRUE(all_are(on_file.data() + page, page, std::byte{0}));
  // Pages outside the range stay holes.
  EXPECT_EQ(file->resident_pages(2 * page, 2 * page), 0);
}

// core's unit tests run on a fake store (tests/unit/fake_buffer_file.h): driven the way the
// allocator drives a store (populate before writing, punch to reclaim, the whole space at
// release), it holds the same bytes and reports the same pages resident as the memfd, and
// refuses the residency queries the memfd refuses (S9.5: the page states rest on these answers).
// populate() of a part page is outside the contract: the fake refuses it (EINVAL), the memfd
// store's fallback would even take it, so it is not compared.
TEST(MemfdBufferFile, FakeStoreAnswersAsTheMemfd_S9_5) {
  constexpr std::size_t kPages = 16;
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  auto memfd = MemfdBufferFile::create("cused-host-test", kPages * page);
  auto fake = testing::FakeBufferFile::create(kPages * page, page);
  auto same = [&](const char* step) {
    EXPECT_EQ(fake->resident_pages(0, kPages * page), memfd->resident_pages(0, kPages * page))
        << step;
    for (std::size_t index = 0; index <= kPages; ++index)
      EXPECT_EQ(fake->page_resident(index * page), memfd->page_resident(index * page))
          << step << ", page " << index;
    // Read through the file: a read of a hole through the mapping would fault a page in.
    std::vector<std::byte> on_file(kPages * page);
    ASSERT_EQ(pread(memfd->fd(), on_file.data(), on_file.size(), 0),
              static_cast<ssize_t>(on_file.size()));
    EXPECT_EQ(std::memcmp(fake->data(), on_file.data(), on_file.size()), 0) << step;
  };
  auto both = [&](auto&& action) {
    action(static_cast<core::BufferFile&>(*memfd));
    action(static_cast<core::BufferFile&>(*fake));
  };
  same("fresh");
  both([&](core::BufferFile& file) {
    ASSERT_EQ(file.populate(0, 3 * page), 0);
    std::fill_n(file.data() + 100, 3 * page - 200, std::byte{0x5a});
  });
  same("populated and written");
  both([&](core::BufferFile& file) { ASSERT_EQ(file.punch_hole(page, page), 0); });
  same("middle page punched");
  both([&](core::BufferFile& file) { ASSERT_EQ(file.populate(page, 2 * page), 0); });
  same("repopulated over a resident neighbour");
  both([&](core::BufferFile& file) {
    ASSERT_EQ(file.populate(8 * page, page), 0);
    ASSERT_EQ(file.punch_hole(0, kPages * page), 0);
  });
  same("released");
  both([&](core::BufferFile& file) {
    EXPECT_EQ(file.resident_pages(page / 2, page), -EINVAL);
    EXPECT_EQ(file.resident_pages(0, (kPages + 1) * page), -EINVAL);
  });
}

}  // namespace
}  // namespace cused::host
