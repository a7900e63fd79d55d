// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=upstream: binder_alloc since Linux 6.14 (docs/allocator.md). alloc->mutex, a sleeping
// lock, covers the buffer metadata and the pages' trips off the LRU only; a new buffer's pages are
// installed after the mutex is dropped, concurrently with other allocations
// (binder_install_buffer_pages). Two allocations sharing a page may both install it: the one that
// comes second finds the page there and counts it as installed, as the kernel answers
// vm_insert_page's -EBUSY. The shrinker (binder_alloc_free_page) try-locks the mutex and holds it
// across the zap, so an allocation never takes a page half reclaimed; a page being installed has a
// user and is not on the LRU, so the shrinker never sees it.
//
// Lock order: lock_ (alloc->mutex, sleeping, lock_policy=), then PageLru::lock() (the list_lru
// lock). Installation holds neither. The shrinker comes in holding PageLru::lock() and only
// try-locks lock_.
#pragma once

#include <optional>

#include "core/alloc/alloc_lock.h"
#include "core/alloc/page_space.h"

namespace cused::core::alloc {

class UpstreamAllocator final : public PageSpace<SleepingAllocLock> {
 public:
  using PageSpace::PageSpace;
  ~UpstreamAllocator() override { release(); }

  std::optional<sync::LockPolicy> sleeping_lock_policy() const override { return lock_.policy(); }

  NewBufferResult new_buffer(std::size_t data_size, std::size_t offsets_size,
                             std::size_t extra_buffers_size, bool is_async,
                             pid_t sender_pid) override CUSED_EXCLUDES(lock_);
  ReclaimStep reclaim_page(Page& page, const ReclaimHook& hook) override
      CUSED_REQUIRES(lru_.lock());
};

}  // namespace cused::core::alloc
