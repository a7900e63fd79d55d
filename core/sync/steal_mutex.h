// sync::StealMutex: the "steal" lock policy (lock_policy=steal), the kernel mutex's own rule. An
// unlock that finds waiters releases the lock and wakes the first waiter, which stays first in the
// queue. Until that waiter runs and takes the lock, any running contender may take ("steal") it:
// a thread entering lock(), or one spinning in lock() before it queues. The woken waiter then
// competes; if the lock is taken it has lost, and goes back to sleep still first in line. After
// `handoff_after` losses it requests a handoff: the next unlock passes ownership to it directly,
// as the kernel does with MUTEX_FLAG_HANDOFF (there, after one loss). So a waiter waits behind at
// most `handoff_after` steals once it is first. docs/locking.md has the exact rules.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/sync/lock_api.h"
#include "core/sync/spin_then_park_mutex.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"
#include "core/sync/wait_queue.h"

namespace cused::sync {

class CUSED_CAPABILITY("mutex") StealMutex : public LockApi<StealMutex> {
 public:
  static constexpr unsigned kDefaultSpinRounds = SpinThenParkMutex::kDefaultSpinRounds;
  static constexpr unsigned kDefaultHandoffAfter = 1;  // the kernel's starvation bound

  // `spin_rounds`: how long a contender spins (and a woken first waiter spins) hoping to find the
  // lock free before it queues (or counts a loss); 0 disables spinning. `handoff_after` (>= 1):
  // losses after which the first waiter requests a handoff.
  explicit StealMutex(unsigned spin_rounds = kDefaultSpinRounds,
                      unsigned handoff_after = kDefaultHandoffAfter);

  // Threads queued for the lock, for diagnostics and tests.
  std::size_t waiters() const { return detail::waiters_in(word_.load(std::memory_order_relaxed)); }
  // The first waiter has lost `handoff_after` times: the next unlock hands the lock over.
  bool handoff_requested() const { return word_.load(std::memory_order_relaxed) & kHandoff; }

  // Test hooks, called by the first waiter from inside lock() (no lock of ours held).
  class Observer {
   public:
    virtual ~Observer() = default;
    // An unlock woke this waiter; it is about to compete for the lock.
    virtual void woken() {}
    // It competed and found the lock taken; `losses` so far.
    virtual void lost(unsigned losses) { static_cast<void>(losses); }
  };
  void set_observer(Observer* observer) { observer_ = observer; }

 private:
  friend class LockApi<StealMutex>;
  // Word flag beside wait_queue.h's kLocked and waiter count: set only by the first waiter, only
  // while the lock is held; the unlock that sees it hands the lock over instead of releasing it, so
  // the word keeps kLocked until the first waiter has run with the lock. Hence a free word (no
  // kLocked) never has a handoff pending, and anyone who sees it free may take it.
  static constexpr std::uint32_t kHandoff = 4;

  void acquire() {
    if (!try_acquire()) acquire_contended();
  }
  // Takes the lock if it is free, waiters or not: this is the steal.
  bool try_acquire() { return detail::try_lock_word(word_); }
  void release() {
    std::uint32_t seen;
    if (!detail::unlock_word_if_alone(word_, seen)) release_contended(seen);
  }

  void acquire_contended() CUSED_EXCLUDES(wait_lock_);
  bool spin_to_steal();
  void spin_while_locked() const;
  void wait_in_queue(detail::Waiter& self) CUSED_EXCLUDES(wait_lock_);
  bool compete_as_first(detail::Waiter& self) CUSED_EXCLUDES(wait_lock_);
  void request_handoff(std::uint32_t seen) CUSED_REQUIRES(wait_lock_);
  void release_contended(std::uint32_t seen) CUSED_EXCLUDES(wait_lock_);
  void wake_first() CUSED_EXCLUDES(wait_lock_);
  void hand_over() CUSED_EXCLUDES(wait_lock_);
  void notify_woken();
  void notify_lost(unsigned losses);

  std::atomic<std::uint32_t> word_{0};
  const unsigned spin_rounds_;
  const unsigned handoff_after_;
  // The kernel mutex's wait_lock: guards the queue, held for a few instructions at a time.
  SpinLock wait_lock_;
  Observer* observer_ = nullptr;
  detail::WaitQueue queue_ CUSED_GUARDED_BY(wait_lock_);
};

}  // namespace cused::sync
