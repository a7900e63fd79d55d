// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=spin-install: the RFC fix of the spin design (docs/reproductions.md). Metadata under
// a spinlock; an install mutex is held across page installation and across the shrinker's
// clear-and-punch. An allocation that meets a page the shrinker has isolated gives back what it
// took, waits for the shrinker on the install mutex and starts over (rollback and retry); the
// page is free by then and is installed afresh.
//
// Lock order: lock_ (spinlock, no lock_policy=), then PageLru::lock(); install_lock_ (sleeping,
// lock_policy=) is never taken with lock_ held, and PageLru::lock() may be taken inside it. The
// shrinker comes in holding PageLru::lock() and only try-locks install_lock_.
#pragma once

#include <cstdint>
#include <optional>

#include "core/alloc/alloc_lock.h"
#include "core/alloc/install_lock.h"
#include "core/alloc/page_space.h"

namespace cused::core::alloc {

class SpinInstallAllocator final : public PageSpace<AllocSpinLock> {
 public:
  SpinInstallAllocator(BufferFile& file, Variant variant, PageLru& lru, AllocatorOptions options,
                       std::uint8_t trace_id);
  ~SpinInstallAllocator() override { release(); }

  std::optional<sync::LockPolicy> sleeping_lock_policy() const override {
    return install_lock_.policy();
  }

  NewBufferResult new_buffer(std::size_t data_size, std::size_t offsets_size,
                             std::size_t extra_buffers_size, bool is_async,
                             pid_t sender_pid) override CUSED_EXCLUDES(lock_, install_lock_);
  ReclaimStep reclaim_page(Page& page, const ReclaimHook& hook) override
      CUSED_REQUIRES(lru_.lock());

 private:
  void add_design_stats_locked(AllocatorStats& stats) const override CUSED_REQUIRES(lock_) {
    stats.reclaim_conflicts = reclaim_conflicts_;
  }

  // Serializes page installation with the shrinker's clear-and-punch.
  InstallLock install_lock_;
  // Allocations that met an isolated page, rolled back and waited.
  std::uint64_t reclaim_conflicts_ CUSED_GUARDED_BY(lock_) = 0;
};

}  // namespace cused::core::alloc
