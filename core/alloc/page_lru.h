// SPDX-License-Identifier: GPL-2.0-only
// The LRU of installed pages that no allocated buffer uses, shared by every proc (the kernel's
// global binder_freelist list_lru), and the reclaim walk over it (binder_shrink_scan with
// binder_alloc_free_page). Create one per daemon (or per test) and hand it to every Allocator;
// it must outlive them all.
#pragma once

#include <atomic>
#include <boost/intrusive/list.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>

#include "core/alloc/page.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

struct ReclaimResult {
  std::size_t pages = 0;    // pages punched out of their memfd
  std::size_t bytes = 0;    // pages * page size: memory returned to the kernel
  std::size_t skipped = 0;  // pages left on the LRU because their allocator was busy (try-lock)
};

// Where the shrinker stands when the test hook runs: the page is off the LRU ("isolated") and
// not yet punched.
struct ReclaimPoint {
  const PageOwner& owner;
  std::size_t page_index;
};

class PageLru {
 public:
  PageLru() = default;
  ~PageLru();
  PageLru(const PageLru&) = delete;
  PageLru& operator=(const PageLru&) = delete;

  // Pages on the LRU now (list_lru_count).
  std::size_t size() const CUSED_EXCLUDES(lock_);

  // Reclaims up to `max_pages` pages from the cold end: for each, try-locks its allocator as the
  // allocator's variant prescribes, takes the page off the LRU, punches it out of the memfd.
  // A page whose allocator is busy is skipped and counted, as in the kernel (LRU_SKIP).
  ReclaimResult reclaim(std::size_t max_pages = std::numeric_limits<std::size_t>::max())
      CUSED_EXCLUDES(lock_);

  // Totals over the lifetime of this LRU.
  ReclaimResult reclaimed_total() const CUSED_EXCLUDES(lock_);

  // Test hook: runs on the reclaiming thread after a page was isolated and before it is punched
  // (with whatever locks the variant holds there). Set it before reclaim runs.
  void set_reclaim_hook(ReclaimHook hook) CUSED_EXCLUDES(lock_);

  // The LRU's lock (list_lru's lru->lock): the allocator designs take it inside their own locks
  // (lock order: allocator lock, then install lock, then this), and PageOwner::reclaim_page runs
  // under it.
  sync::SpinLock& lock() const CUSED_RETURN_CAPABILITY(lock_) { return lock_; }

  // For the allocators: all of these run under lock().
  bool on_lru(const Page& page) const CUSED_REQUIRES(lock_) { return page.lru_hook_.is_linked(); }
  bool isolated(const Page& page) const CUSED_REQUIRES(lock_) { return page.isolated_; }
  void add(Page& page) CUSED_REQUIRES(lock_) { list_.push_back(page); }
  void remove(Page& page) CUSED_REQUIRES(lock_) { list_.erase(list_.iterator_to(page)); }
  // Takes the page off the LRU for a reclaim: neither on the LRU nor free until end_isolation.
  void isolate(Page& page) CUSED_REQUIRES(lock_);
  void end_isolation(Page& page) CUSED_REQUIRES(lock_) { page.isolated_ = false; }

  // Teardown of an allocator sleeps until its reclaims in flight are done (PageSpace::release):
  // a reclaim bumps the epoch and wakes sleepers after its last touch of the allocator. The word
  // lives here because the allocator may be gone by the time of the wake.
  void reclaim_done();
  void wait_for_reclaim_done(std::uint32_t seen_epoch);
  std::uint32_t reclaim_epoch() const { return reclaim_epoch_.load(); }

 private:
  using List = boost::intrusive::list<
      Page,
      boost::intrusive::member_hook<Page, boost::intrusive::list_member_hook<>, &Page::lru_hook_>>;

  std::atomic<std::uint32_t> reclaim_epoch_{0};
  std::atomic<std::uint32_t> teardown_waiters_{0};

  mutable sync::SpinLock lock_;
  List list_ CUSED_GUARDED_BY(lock_);
  ReclaimResult total_ CUSED_GUARDED_BY(lock_);
  ReclaimHook hook_ CUSED_GUARDED_BY(lock_);
};

}  // namespace cused::core::alloc
