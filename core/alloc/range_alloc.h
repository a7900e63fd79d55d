// SPDX-License-Identifier: GPL-2.0-only
// The buffer tiling of one proc's space (S9.1-S9.4): buffers cover [0, size) in address order,
// each free or allocated; best fit among free buffers, split on allocation, merge on free. Pure
// bookkeeping: no locks, no pages (the Allocator holds its metadata lock around every call).
//
// Containers: the kernel's structure (an address-ordered list plus two red-black trees threaded
// through the buffer itself) via Boost.Intrusive. A buffer node is allocated once and linked into
// the containers without further allocation, neighbours are one pointer away, and every
// operation stays O(log n) however many buffers a client piles up. Flat containers
// (boost::container::flat_map) win lookups for tens of buffers but turn each split and merge
// into a memmove of the whole index: a client that parks a few hundred thousand 8-byte oneways
// (2 MiB of async budget) would make every allocation of its peers cost milliseconds. std::map
// would allocate a node per insert and still need a second structure for address neighbours.
#pragma once

#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>
#include <cstddef>
#include <memory>

#include "core/alloc/buffer.h"

namespace cused::core::alloc {

struct BufferNode : Buffer {
  boost::intrusive::list_member_hook<> entry;  // address order, free and allocated alike
  boost::intrusive::set_member_hook<> rb;      // the free tree or the allocated tree
  bool free = true;
};

struct SpaceTotals {
  std::size_t allocated_buffers = 0;
  std::size_t allocated_bytes = 0;
  std::size_t largest_allocated = 0;
  std::size_t free_buffers = 0;
  std::size_t free_bytes = 0;
  std::size_t largest_free = 0;
};

class RangeAlloc {
 public:
  RangeAlloc() = default;
  ~RangeAlloc();
  RangeAlloc(const RangeAlloc&) = delete;
  RangeAlloc& operator=(const RangeAlloc&) = delete;

  // One free buffer spanning [0, size) (S1.4).
  void reset(std::size_t size);
  std::size_t size() const { return size_; }

  // S9.2: the smallest free buffer with capacity >= size, the lowest address among equals.
  BufferNode* best_fit(std::size_t size);
  // Takes `size` bytes from the front of free buffer `node` (S9.3); the remainder, if any,
  // becomes a free buffer right after it: `spare` if given (consumed only then), else a node a
  // merge left (needs_node() says whether the split needs `spare`). Returns the node, now
  // allocated and indexed by address.
  BufferNode* take(BufferNode& node, std::size_t size, std::unique_ptr<BufferNode>& spare);
  // Whether taking `size` bytes of free buffer `node` needs a node nobody has yet.
  bool needs_node(const BufferNode& node, std::size_t size) const {
    return node.size() > size && kept_.empty();
  }
  // S9.9: the allocated buffer starting exactly at `offset`, or nullptr.
  BufferNode* find_allocated(std::size_t offset);
  // S9.4: frees an allocated node and merges it with free neighbours. Right after take() this
  // is its exact undo (a free buffer never has a free neighbour, so the only one to merge with
  // is the remainder take() split off).
  void release(BufferNode& node);

  SpaceTotals totals() const;
  template <typename F>
  void for_each_allocated(F&& f) const {
    for (const BufferNode& node : allocated_) f(node);
  }
  BufferNode* first_allocated() { return allocated_.empty() ? nullptr : &*allocated_.begin(); }

 private:
  struct BySizeThenOffset {
    bool operator()(const BufferNode& a, const BufferNode& b) const {
      return a.size() != b.size() ? a.size() < b.size() : a.offset() < b.offset();
    }
  };
  struct ByOffset {
    bool operator()(const BufferNode& a, const BufferNode& b) const {
      return a.offset() < b.offset();
    }
  };
  using RbHook = boost::intrusive::member_hook<BufferNode, boost::intrusive::set_member_hook<>,
                                               &BufferNode::rb>;
  using FreeTree =
      boost::intrusive::set<BufferNode, RbHook, boost::intrusive::compare<BySizeThenOffset>>;
  using AllocatedTree =
      boost::intrusive::set<BufferNode, RbHook, boost::intrusive::compare<ByOffset>>;
  using AddressList = boost::intrusive::list<
      BufferNode, boost::intrusive::member_hook<BufferNode, boost::intrusive::list_member_hook<>,
                                                &BufferNode::entry>>;

  BufferNode* next(BufferNode& node);
  BufferNode* prev(BufferNode& node);
  // Removes `victim` (free, already out of the free tree) and gives its bytes to `keeper`.
  void absorb(BufferNode& keeper, BufferNode& victim);
  void clear();

  // Keeps a node a merge removed for the next split, or disposes of it when enough are kept.
  void keep(BufferNode& node);

  // The kernel frees a merged-away binder_buffer to its slab cache and takes the next split's
  // from there; these nodes are that cache, so the steady state of one split per allocation and
  // one merge per free allocates nothing.
  static constexpr std::size_t kMaxKept = 16;

  std::size_t size_ = 0;
  // Owns the nodes in the space: every node is linked here from its split to its merge.
  AddressList buffers_;
  // Owns the nodes merges removed, kept for reuse.
  AddressList kept_;
  FreeTree free_;
  AllocatedTree allocated_;
};

}  // namespace cused::core::alloc
