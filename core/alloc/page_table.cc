// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/page_table.h"

namespace cused::core::alloc {

void PageTable::reset(PageOwner* owner, std::size_t page_count) {
  owner_ = owner;
  page_count_ = page_count;
  chunk_pages_ =
      variant_ == PageTableVariant::eager ? std::max<std::size_t>(page_count, 1) : kLazyChunkPages;
  chunks_.clear();
  chunks_.resize((page_count + chunk_pages_ - 1) / chunk_pages_);
  if (variant_ == PageTableVariant::eager && page_count > 0) create_chunk(0);
}

Page& PageTable::get(std::size_t index) {
  std::size_t chunk = index / chunk_pages_;
  if (!chunks_[chunk]) create_chunk(chunk);
  return chunks_[chunk][index % chunk_pages_];
}

void PageTable::create_chunk(std::size_t chunk) {
  std::size_t first = chunk * chunk_pages_;
  std::size_t count = std::min(chunk_pages_, page_count_ - first);
  // make_unique<T[]> value-initializes; the tail of a short last chunk stays unused.
  chunks_[chunk] = std::make_unique<Page[]>(chunk_pages_);
  for (std::size_t i = 0; i < count; ++i)
    chunks_[chunk][i].init(owner_, static_cast<std::uint32_t>(first + i));
}

std::size_t PageTable::metadata_bytes() const {
  std::size_t bytes = 0;
  for (const auto& chunk : chunks_)
    if (chunk) bytes += chunk_pages_ * sizeof(Page);
  return bytes;
}

}  // namespace cused::core::alloc
