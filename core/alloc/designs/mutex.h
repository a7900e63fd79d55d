// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=mutex: binder_alloc as in Linux 6.1 (before the 6.14 rework; docs/allocator.md). One
// sleeping lock, alloc->mutex, covers the buffer metadata and page installation: a new buffer's
// pages are installed with the mutex held. The shrinker (binder_alloc_free_page) try-locks the
// mutex and holds it across the punch, so no allocation ever sees a page half reclaimed.
//
// Lock order: lock_ (alloc->mutex, sleeping, lock_policy=), then PageLru::lock() (the list_lru
// lock). The shrinker comes in holding PageLru::lock() and only try-locks lock_.
#pragma once

#include <optional>

#include "core/alloc/alloc_lock.h"
#include "core/alloc/page_space.h"

namespace cused::core::alloc {

class MutexAllocator final : public PageSpace<SleepingAllocLock> {
 public:
  using PageSpace::PageSpace;
  ~MutexAllocator() override { release(); }

  std::optional<sync::LockPolicy> sleeping_lock_policy() const override { return lock_.policy(); }

  NewBufferResult new_buffer(std::size_t data_size, std::size_t offsets_size,
                             std::size_t extra_buffers_size, bool is_async,
                             pid_t sender_pid) override CUSED_EXCLUDES(lock_);
  ReclaimStep reclaim_page(Page& page, const ReclaimHook& hook) override
      CUSED_REQUIRES(lru_.lock());
};

}  // namespace cused::core::alloc
