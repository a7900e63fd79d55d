// SPDX-License-Identifier: GPL-2.0-only
#include "core/sync/handoff_mutex.h"

#include "core/sync/lock_guard.h"

namespace cused::sync {

void HandoffMutex::acquire_contended() {
  detail::Waiter self;
  {
    LockGuard guard(wait_lock_);
    if (detail::lock_word_or_queue(word_, queue_, self)) return;
  }
  self.sleep();  // a handoff unlocker only ever tells a waiter kOwner
}

void HandoffMutex::hand_over() {
  PendingWake wake;
  {
    LockGuard guard(wait_lock_);
    detail::Waiter& next = queue_.front();
    queue_.pop_front();
    // The word stays kLocked: the lock now belongs to `next`. Nobody else changes the word while
    // we hold the wait lock (it is locked, and queuing needs the wait lock).
    word_.fetch_sub(detail::kOneWaiter, std::memory_order_relaxed);
    wake = next.tell(detail::Waiter::kOwner);
  }
  wake.send();
}

}  // namespace cused::sync
