// SPDX-License-Identifier: GPL-2.0-only
// The page metadata of one proc's space, allocated all at once or chunk by chunk (the userspace
// form of the kernel's kcalloc of alloc->pages at mmap versus allocating it as it is used).
// Page objects never move once created: the global LRU links them by address.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/alloc/page.h"
#include "core/alloc/variant.h"

namespace cused::core::alloc {

class PageTable {
 public:
  static constexpr std::size_t kLazyChunkPages = 64;  // 256 KiB of space per chunk (4 KiB pages)

  explicit PageTable(PageTableVariant variant) : variant_(variant) {}

  // Sizes the table for `page_count` pages; eager tables allocate every Page now.
  void reset(PageOwner* owner, std::size_t page_count);
  std::size_t page_count() const { return page_count_; }
  // The page, or nullptr when its chunk was never needed (lazy): such a page is free.
  Page* find(std::size_t index) const {
    if (index >= page_count_) return nullptr;
    const auto& chunk = chunks_[index / chunk_pages_];
    return chunk ? &chunk[index % chunk_pages_] : nullptr;
  }
  // The page, creating its chunk if needed.
  Page& get(std::size_t index);
  // Bytes of Page objects allocated so far.
  std::size_t metadata_bytes() const;

  template <typename F>
  void for_each_existing(F&& f) const {
    for (std::size_t index = 0; index < page_count_; ++index)
      if (Page* page = find(index)) f(*page);
  }

 private:
  void create_chunk(std::size_t chunk);

  const PageTableVariant variant_;
  PageOwner* owner_ = nullptr;
  std::size_t page_count_ = 0;
  std::size_t chunk_pages_ = 1;
  // One slot per chunk, sized once by reset() and never resized, so a slot's address is stable.
  // small_vector: a lazy 4 MiB space has 16 chunks, so the slot array lives inline in the
  // allocator and a proc that never receives a transaction allocates no page metadata at all,
  // which is the point of the lazy variant; std::vector would allocate the slot array anyway.
  boost::container::small_vector<std::unique_ptr<Page[]>, 16> chunks_;
};

}  // namespace cused::core::alloc
