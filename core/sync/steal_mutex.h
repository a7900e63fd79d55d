// SPDX-License-Identifier: GPL-2.0-only
// sync::StealMutex: the "steal" lock policy (lock_policy=steal), the kernel mutex's own rule. An
// unlock that finds waiters releases the lock, wakes the first waiter (which stays first in the
// queue) and marks the wake-up pending. Until that waiter runs and takes the lock, any running
// contender may take ("steal") it: a thread entering lock(), or one spinning in lock() before it
// queues; their unlocks only release while the mark is set. The woken waiter then competes; if the
// lock is taken it has lost, and goes back to sleep still first in line. After `handoff_after`
// losses it requests a handoff: the next unlock passes ownership to it directly, as the kernel does
// with MUTEX_FLAG_HANDOFF (there, after one loss). So once first, a waiter loses at most
// `handoff_after` times. docs/locking.md has the exact rules.
//
// With a steal window (Tuning::steal_window, lock_policy=steal-window, issue 33) a running
// contender may steal only for that long after the unlock that woke the first waiter; after it, the
// free lock is reserved for the woken waiter, and contenders queue behind it (a handoff that
// running threads may pre-empt only briefly: proxy execution's "steal + handoff").
#pragma once

#include <atomic>
#include <chrono>
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
  struct Tuning {
    // How long a contender spins (and a woken first waiter spins) hoping to find the lock free
    // before it queues (or counts a loss); 0 disables spinning.
    unsigned spin_rounds = SpinThenParkMutex::kDefaultSpinRounds;
    // Losses after which the first waiter requests a handoff (at least 1; the kernel's bound is 1).
    unsigned handoff_after = 1;
    // Whether unlocks between a wake-up and the woken waiter's run only release (kWakePending).
    // false: every unlock with waiters takes the wait lock to wake the first waiter, as the
    // kernel's unlock does; kept to measure what the mark is worth.
    bool coalesce_wakeups = true;
    // How long after the unlock that woke the first waiter running contenders may still steal the
    // free lock; after that it is reserved for the woken waiter until it runs. 0: no limit, the
    // lock is stealable until the woken waiter runs (lock_policy=steal). The window is measured
    // from the kWakePending mark, so a window forces coalesce_wakeups on.
    std::chrono::nanoseconds steal_window{0};
  };

  // lock_policy=steal-window's window. A futex wake-up takes several µs to get the woken waiter
  // running here (about 5 µs, SpinThenParkMutex::kDefaultSpinRounds), so 2 µs lets the contenders
  // that are already at the lock (spinning or just arriving, the steals that make stealing pay)
  // have it, about 40 pauses of ~50 ns, and reserves the rest of the wake-up latency for the
  // woken waiter, which thus loses rarely instead of up to once per wake-up.
  static constexpr std::chrono::nanoseconds kDefaultStealWindow = std::chrono::microseconds(2);

  StealMutex() : StealMutex(Tuning{}) {}
  explicit StealMutex(Tuning tuning);

  // Threads queued for the lock, for diagnostics and tests.
  std::size_t waiters() const { return detail::waiters_in(word_.load(std::memory_order_relaxed)); }
  // The first waiter has lost `handoff_after` times: the next unlock hands the lock over.
  bool handoff_requested() const { return word_.load(std::memory_order_relaxed) & kHandoff; }

  // Test hooks, called by the first waiter from inside lock() (no lock of ours held).
  class Observer {
   public:
    virtual ~Observer() = default;
    // An unlock woke this waiter, which has not claimed the wake-up yet (kWakePending is still
    // set): for the lock it is not running, and a steal window still applies.
    virtual void waking() {}
    // An unlock woke this waiter; it is about to compete for the lock.
    virtual void woken() {}
    // It competed and found the lock taken; `losses` so far.
    virtual void lost(unsigned losses) { static_cast<void>(losses); }
  };
  void set_observer(Observer* observer) { observer_ = observer; }

 private:
  friend class LockApi<StealMutex>;
  // Word flags beside wait_queue.h's kLocked and waiter count.
  // kWakePending: an unlock released the lock and woke the first waiter, which has not run yet.
  // This is the mark "stealable until the chosen waiter runs": unlocks meanwhile just release the
  // lock (one compare-and-swap, no wait lock, no second wake-up). The first waiter clears it when
  // it runs, and a waiter that leaves the queue takes it along.
  static constexpr std::uint32_t kWakePending = 2;
  // kHandoff: set only by the first waiter, only while the lock is held; the unlock that sees it
  // hands the lock over instead of releasing it, so the word keeps kLocked until the first waiter
  // has run with the lock. Hence a free word never has a handoff pending, and anyone who sees it
  // free may take it.
  static constexpr std::uint32_t kHandoff = 4;

  void acquire() {
    if (!try_acquire()) acquire_contended();
  }
  // Takes the lock if it is free, waiters or not: this is the steal. The uncontended case is one
  // compare-and-swap; the window's clock is read only for a word that shows kWakePending.
  bool try_acquire() {
    return detail::try_lock_word(word_, [this](std::uint32_t seen) { return may_steal(seen); });
  }
  void release() {
    std::uint32_t seen;
    if (!detail::unlock_word_if_alone(word_, seen)) release_contended(seen);
  }

  // Whether a running contender may take the free word `seen` (the woken first waiter may always).
  bool may_steal(std::uint32_t seen) const {
    return !(seen & kWakePending) || steal_window_.count() == 0 || within_steal_window();
  }
  bool within_steal_window() const;

  void acquire_contended() CUSED_EXCLUDES(wait_lock_);
  bool spin_to_steal();
  void spin_while_locked() const;
  void wait_in_queue(detail::Waiter& self) CUSED_EXCLUDES(wait_lock_);
  bool compete_as_first(detail::Waiter& self) CUSED_EXCLUDES(wait_lock_);
  void request_handoff(std::uint32_t seen) CUSED_REQUIRES(wait_lock_);
  void release_contended(std::uint32_t seen) CUSED_EXCLUDES(wait_lock_);
  void wake_first() CUSED_EXCLUDES(wait_lock_);
  void hand_over() CUSED_EXCLUDES(wait_lock_);
  template <typename Call>
  void notify(Call call);

  std::atomic<std::uint32_t> word_{0};
  const unsigned spin_rounds_;
  const unsigned handoff_after_;
  const bool coalesce_wakeups_;
  // The kernel mutex's wait_lock: guards the queue, held for a few instructions at a time. (Here,
  // in the padding after the flag, the steal window's fields cost 16 bytes, not 24.)
  SpinLock wait_lock_;
  const std::chrono::nanoseconds steal_window_;
  // steady_clock time (ns) of the unlock that last set kWakePending, when steal_window_ > 0.
  std::atomic<std::int64_t> wake_marked_at_ns_{0};
  Observer* observer_ = nullptr;
  detail::WaitQueue queue_ CUSED_GUARDED_BY(wait_lock_);
};

}  // namespace cused::sync
