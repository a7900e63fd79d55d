// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/range_alloc.h"

#include <algorithm>
#include <cassert>

namespace cused::core::alloc {

namespace {
void dispose(BufferNode* node) { std::unique_ptr<BufferNode>{node}; }
}  // namespace

RangeAlloc::~RangeAlloc() { clear(); }

void RangeAlloc::clear() {
  free_.clear();
  allocated_.clear();
  buffers_.clear_and_dispose(dispose);
  kept_.clear_and_dispose(dispose);
}

void RangeAlloc::reset(std::size_t size) {
  clear();
  size_ = size;
  auto whole = std::make_unique<BufferNode>();
  whole->size_ = size;
  free_.insert(*whole);
  buffers_.push_back(*whole.release());
}

BufferNode* RangeAlloc::next(BufferNode& node) {
  auto it = std::next(buffers_.iterator_to(node));
  return it == buffers_.end() ? nullptr : &*it;
}

BufferNode* RangeAlloc::prev(BufferNode& node) {
  auto it = buffers_.iterator_to(node);
  return it == buffers_.begin() ? nullptr : &*std::prev(it);
}

BufferNode* RangeAlloc::best_fit(std::size_t size) {
  // The first node not less than (size, offset 0): the smallest capacity >= size, lowest
  // address among equals, which keeps reuse at low addresses and so on already installed pages.
  BufferNode probe;
  probe.size_ = size;
  auto it = free_.lower_bound(probe);
  return it == free_.end() ? nullptr : &*it;
}

BufferNode* RangeAlloc::take(BufferNode& node, std::size_t size,
                             std::unique_ptr<BufferNode>& spare) {
  assert(node.free && node.size() >= size);
  free_.erase(free_.iterator_to(node));
  if (node.size() > size) {
    BufferNode* kept = kept_.empty() || spare ? nullptr : &kept_.front();
    if (kept) kept_.pop_front();
    BufferNode& rest = kept ? *kept : *spare.release();
    rest.offset_ = node.offset() + size;
    rest.size_ = node.size() - size;
    rest.free = true;
    buffers_.insert(std::next(buffers_.iterator_to(node)), rest);
    free_.insert(rest);
    node.size_ = size;
  }
  node.free = false;
  allocated_.insert(node);
  return &node;
}

BufferNode* RangeAlloc::find_allocated(std::size_t offset) {
  BufferNode probe;
  probe.offset_ = offset;
  auto it = allocated_.find(probe);
  return it == allocated_.end() ? nullptr : &*it;
}

void RangeAlloc::absorb(BufferNode& keeper, BufferNode& victim) {
  keeper.size_ += victim.size();
  buffers_.erase(buffers_.iterator_to(victim));
  keep(victim);
}

void RangeAlloc::keep(BufferNode& node) {
  if (kept_.size() < kMaxKept)
    kept_.push_back(node);
  else
    dispose(&node);
}

void RangeAlloc::release(BufferNode& node) {
  assert(!node.free);
  allocated_.erase(allocated_.iterator_to(node));
  node.free = true;
  BufferNode* keeper = &node;
  if (BufferNode* after = next(node); after && after->free) {
    free_.erase(free_.iterator_to(*after));
    absorb(node, *after);
  }
  if (BufferNode* before = prev(node); before && before->free) {
    free_.erase(free_.iterator_to(*before));
    absorb(*before, node);
    keeper = before;
  }
  free_.insert(*keeper);
}

SpaceTotals RangeAlloc::totals() const {
  SpaceTotals totals;
  for (const BufferNode& node : allocated_) {
    ++totals.allocated_buffers;
    totals.allocated_bytes += node.size();
    totals.largest_allocated = std::max(totals.largest_allocated, node.size());
  }
  for (const BufferNode& node : free_) {
    ++totals.free_buffers;
    totals.free_bytes += node.size();
    totals.largest_free = std::max(totals.largest_free, node.size());
  }
  return totals;
}

}  // namespace cused::core::alloc
