// The daemon's buffer store (cused/host/memfd_buffer_file.h): the page size core's allocator
// counts in, and populate()'s guarantee that the allocator's page install relies on: a hole
// becomes a resident zero page, a resident page keeps every byte.
#include "cused/host/memfd_buffer_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <vector>

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

}  // namespace
}  // namespace cused::host
