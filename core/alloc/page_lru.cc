// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/page_lru.h"

#include <cassert>

#include "core/sync/futex.h"
#include "core/sync/lock_guard.h"

namespace cused::core::alloc {

PageLru::~PageLru() {
  // Every Allocator takes its pages off in release(); a page left here would dangle.
  sync::LockGuard guard(lock_);
  assert(list_.empty());
  list_.clear();
}

std::size_t PageLru::size() const {
  sync::LockGuard guard(lock_);
  return list_.size();
}

ReclaimResult PageLru::reclaimed_total() const {
  sync::LockGuard guard(lock_);
  return total_;
}

void PageLru::set_reclaim_hook(ReclaimHook hook) {
  sync::LockGuard guard(lock_);
  hook_ = std::move(hook);
}

// Sequentially consistent on purpose: the waiter announces itself, then (in the kernel) reads
// the epoch; the finisher bumps the epoch, then reads the waiter count. Either the finisher sees
// the waiter or the waiter's futex_wait sees the new epoch.
void PageLru::reclaim_done() {
  reclaim_epoch_.fetch_add(1);
  if (teardown_waiters_.load() > 0)
    sync::futex_wake(reclaim_epoch_, std::numeric_limits<int>::max());
}

void PageLru::wait_for_reclaim_done(std::uint32_t seen_epoch) {
  teardown_waiters_.fetch_add(1);
  // Returns at once if a reclaim finished since `seen_epoch` was read.
  sync::futex_wait(reclaim_epoch_, seen_epoch);
  teardown_waiters_.fetch_sub(1);
}

void PageLru::isolate(Page& page) {
  remove(page);
  page.isolated_ = true;
}

ReclaimResult PageLru::reclaim(std::size_t max_pages) {
  ReclaimResult result;
  sync::LockGuard guard(lock_);
  const ReclaimHook hook = hook_;
  // Like list_lru_walk: visit at most max_pages entries from the cold end. A page whose
  // allocator is busy stays where it is (LRU_SKIP); after a reclaim the walk restarts from the
  // head because the owner dropped the lock (LRU_REMOVED_RETRY).
  std::size_t visited = 0;
  auto it = list_.begin();
  while (visited < max_pages && it != list_.end()) {
    ++visited;
    Page& page = *it;
    PageOwner& owner = page.owner();
    const std::size_t bytes = owner.page_bytes();
    if (owner.reclaim_page(page, hook) == ReclaimStep::skipped) {
      ++result.skipped;
      ++it;
      continue;
    }
    result.bytes += bytes;
    ++result.pages;
    it = list_.begin();
  }
  total_.pages += result.pages;
  total_.bytes += result.bytes;
  total_.skipped += result.skipped;
  return result;
}

}  // namespace cused::core::alloc
