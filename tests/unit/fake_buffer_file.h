// SPDX-License-Identifier: GPL-2.0-only
// core::BufferFile for unit tests: the buffer store as page-aligned heap memory, with the memfd's
// page semantics (cused/host/memfd_buffer_file.h) and no OS object. A punched page reads as zero
// and is not resident; populate() makes pages resident without changing a byte; residency is
// kept per page. No client maps it (fd() is -1): the test's client reads its buffers at data(),
// as its mapping of the memfd would show them.
//
// What the fake cannot see: a write to a page that is not resident. The memfd would make that
// page resident by faulting it in; here it stays counted as a hole, so a test of residency sees
// only what the allocator installed (populate) and reclaimed (punch_hole), which is what it
// means to check.
//
// Under ThreadSanitizer the fake's zeroing of a punched page is a write TSan sees, where the
// memfd's happens in the kernel. The allocator orders every punch after the last use of the page
// (its lock, or the install lock), except under the `spin` variant's reclaim, racy by design
// (core/alloc/designs/spin.cc, reclaim_page); no test of core-unit reclaims, so it never meets the
// fake. A test that reclaimed under `spin` on this store would see that race reported.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "core/buffer_file.h"
#include "core/sync/lock_guard.h"
#include "core/sync/std_mutex.h"
#include "core/sync/thread_annotations.h"

namespace cused::testing {

class FakeBufferFile final : public core::BufferFile {
 public:
  // The x86-64 and arm64 (4K) page, so tests see the same page counts on every host.
  static constexpr std::size_t kPageSize = 4096;

  // `size` bytes of zeros, none of them resident (a fresh memfd has no pages).
  static std::unique_ptr<FakeBufferFile> create(std::size_t size,
                                                std::size_t page_size = kPageSize) {
    const std::size_t pages = (size + page_size - 1) / page_size;
    // aligned_alloc wants a size that is a multiple of the alignment; an empty store still gets
    // one page so data() is a real address.
    const std::size_t bytes = std::max<std::size_t>(pages, 1) * page_size;
    auto* data = static_cast<std::byte*>(std::aligned_alloc(page_size, bytes));
    if (!data) throw std::bad_alloc();
    std::memset(data, 0, bytes);
    return std::unique_ptr<FakeBufferFile>(new FakeBufferFile(data, size, page_size));
  }
  ~FakeBufferFile() override { std::free(data()); }

  // As MADV_POPULATE_WRITE on the daemon's mapping: `offset` page-aligned (EINVAL), the range
  // rounded up to whole pages and inside the store (ENOMEM, madvise's answer for an unmapped
  // address). The bytes are left alone: a hole already reads as zero.
  int populate(std::size_t offset, std::size_t len) override {
    const std::size_t page = page_size();
    if (offset % page != 0) return -EINVAL;
    const std::size_t end = round_up(offset + len);
    if (end < offset || end > mapped_size()) return -ENOMEM;
    sync::LockGuard guard(lock_);
    std::fill(resident_.begin() + offset / page, resident_.begin() + end / page, true);
    return 0;
  }

  // As fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE): the bytes of the range read as
  // zero from now on, the whole pages in it are no longer resident (a partial page is zeroed and
  // stays), and what lies past the end of the store is ignored. Zeroing and dropping the page
  // are one step under the lock, so a concurrent populate() of the page finds it either before
  // or after, as with the memfd.
  int punch_hole(std::size_t offset, std::size_t len) override {
    const std::size_t page = page_size();
    const std::size_t start = std::min(offset, size());
    const std::size_t end = len > size() - start ? size() : start + len;
    sync::LockGuard guard(lock_);
    std::memset(data() + start, 0, end - start);
    const std::size_t first_whole = round_up(start) / page;
    // The store's last page counts as whole when the range runs to the end of the store.
    const std::size_t last_whole = (end == size() ? round_up(end) : end - end % page) / page;
    for (std::size_t index = first_whole; index < last_whole; ++index) resident_[index] = false;
    return 0;
  }

  // As SEEK_DATA finding `offset` itself: its page is resident; past the end nothing is.
  bool page_resident(std::size_t offset) const override {
    if (offset >= size()) return false;
    sync::LockGuard guard(lock_);
    return resident_[offset / page_size()];
  }

  // As mincore on the daemon's mapping: `offset` a page inside the store, `len` rounded up to
  // pages (EINVAL otherwise, this store's answer for a range the memfd store refuses too).
  long resident_pages(std::size_t offset, std::size_t len) const override {
    const std::size_t page = page_size();
    if (offset % page != 0 || offset > size() || len > size() - offset) return -EINVAL;
    sync::LockGuard guard(lock_);
    return std::count(resident_.begin() + offset / page,
                      resident_.begin() + round_up(offset + len) / page, true);
  }

 private:
  FakeBufferFile(std::byte* data, std::size_t size, std::size_t page_size)
      : BufferFile(-1, data, size, page_size), resident_(round_up(size) / page_size, false) {}

  std::size_t round_up(std::size_t bytes) const {
    return (bytes + page_size() - 1) / page_size() * page_size();
  }
  std::size_t mapped_size() const { return round_up(size()); }

  mutable sync::StdMutex lock_;
  std::vector<bool> resident_ CUSED_GUARDED_BY(lock_);
};

}  // namespace cused::testing
