// SPDX-License-Identifier: GPL-2.0-only
// sync::HandoffMutex: the "handoff" lock policy (lock_policy=handoff). Strict FIFO with direct
// ownership transfer: an unlock that finds waiters does not release the lock, it makes the first
// waiter the owner and wakes it. Nobody else can take the lock meanwhile, not even a thread that
// is running right now, so every contended unlock costs the lock a wake-up latency during which it
// is held by a thread that is not yet running. This is the kernel mutex with MUTEX_FLAG_HANDOFF
// forced on every contended unlock, as proxy execution does (docs/locking.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/sync/lock_api.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"
#include "core/sync/wait_queue.h"

namespace cused::sync {

class CUSED_CAPABILITY("mutex") HandoffMutex : public LockApi<HandoffMutex> {
 public:
  HandoffMutex() = default;

  // Threads queued for the lock, for diagnostics and tests.
  std::size_t waiters() const { return detail::waiters_in(word_.load(std::memory_order_relaxed)); }

 private:
  friend class LockApi<HandoffMutex>;

  void acquire() {
    if (!try_acquire()) acquire_contended();
  }
  // Fails while a handoff is pending: the word stays kLocked until the new owner unlocks (the word
  // counts waiters only together with kLocked, because an unlock never frees a lock with waiters).
  bool try_acquire() { return detail::try_lock_word(word_); }
  void release() {
    std::uint32_t seen;
    if (!detail::unlock_word_if_alone(word_, seen)) hand_over();
  }

  void acquire_contended() CUSED_EXCLUDES(wait_lock_);
  void hand_over() CUSED_EXCLUDES(wait_lock_);

  std::atomic<std::uint32_t> word_{0};
  // The kernel mutex's wait_lock: guards the queue, held for a few instructions at a time.
  SpinLock wait_lock_;
  detail::WaitQueue queue_ CUSED_GUARDED_BY(wait_lock_);
};

}  // namespace cused::sync
