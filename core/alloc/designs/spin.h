// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=spin: binder_alloc's metadata under a spinlock, with nothing ordering page
// installation against the shrinker's punch. Racy ON PURPOSE: a page the shrinker has marked not
// installed but not punched yet can be taken by a new buffer, installed again (a no-op, the page
// is still there), written, and then punched under the live buffer, which reads back zeros
// (tests/unit/alloc/reclaim_race_test.cc). It stands for the spinlock conversion as first
// proposed, the bug the RFC's install mutex (spin-install) fixes (docs/reproductions.md).
//
// Lock order: lock_ (spinlock, no lock_policy=), then PageLru::lock(). Installation runs without
// either. The shrinker comes in holding PageLru::lock() and only try-locks lock_, briefly.
#pragma once

#include <optional>

#include "core/alloc/alloc_lock.h"
#include "core/alloc/page_space.h"

namespace cused::core::alloc {

class SpinAllocator final : public PageSpace<AllocSpinLock> {
 public:
  using PageSpace::PageSpace;
  ~SpinAllocator() override { release(); }

  std::optional<sync::LockPolicy> sleeping_lock_policy() const override { return std::nullopt; }

  NewBufferResult new_buffer(std::size_t data_size, std::size_t offsets_size,
                             std::size_t extra_buffers_size, bool is_async,
                             pid_t sender_pid) override CUSED_EXCLUDES(lock_);
  ReclaimStep reclaim_page(Page& page, const ReclaimHook& hook) override
      CUSED_REQUIRES(lru_.lock());
};

}  // namespace cused::core::alloc
