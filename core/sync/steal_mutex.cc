// SPDX-License-Identifier: GPL-2.0-only
#include "core/sync/steal_mutex.h"

#include <algorithm>

#include "core/sync/cpu_relax.h"
#include "core/sync/lock_guard.h"

namespace cused::sync {

using detail::kLocked;
using detail::kOneWaiter;
using detail::Waiter;

namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// A steal window is measured from the kWakePending mark, which says that a woken waiter is on its
// way; without the mark a contender could not tell a lock reserved for a waiter from a free one.
// So a window turns the mark on rather than being refused.
StealMutex::StealMutex(Tuning tuning)
    : spin_rounds_(tuning.spin_rounds),
      handoff_after_(std::max(tuning.handoff_after, 1u)),
      coalesce_wakeups_(tuning.coalesce_wakeups || tuning.steal_window.count() > 0),
      steal_window_(std::max(tuning.steal_window, std::chrono::nanoseconds::zero())) {}

// Why refusing a free lock cannot lose a wake-up: kWakePending is set, so the first waiter has been
// told kWoken (or is about to be, by the unlock that set the mark) and is coming. It clears the
// mark when it runs and, ignoring the window, takes a free lock (or, if a steal made after it
// cleared the mark beat it, requests a handoff); whoever holds the lock then finds the contenders
// that queued meanwhile counted in the word and wakes the first at its unlock. The time is read
// relaxed and may be stale (another release's, or not yet stored: release_contended stores it
// after its compare-and-swap), but every stored time was read before the compare-and-swap that
// set the mark it belongs to, so none is later than the current mark's: a stale time can only end
// the window early and make a contender queue sooner.
bool StealMutex::within_steal_window() const {
  return now_ns() < wake_marked_at_ns_.load(std::memory_order_relaxed) + steal_window_.count();
}

// Calls a test hook, outside TSan's view of the lock (the hook runs on behalf of the test).
template <typename Call>
void StealMutex::notify(Call call) {
  if (observer_ == nullptr) return;
  divert_begin();
  call(*observer_);
  divert_end();
}

void StealMutex::acquire_contended() {
  if (spin_to_steal()) return;
  Waiter self;
  {
    LockGuard guard(wait_lock_);
    if (detail::lock_word_or_queue(word_, queue_, self,
                                   [this](std::uint32_t seen) { return may_steal(seen); }))
      return;
  }
  wait_in_queue(self);
}

// The optimistic spin of a running contender: it may take the lock whenever it is free, even with
// waiters queued (the steal), unless a steal window has closed on it.
bool StealMutex::spin_to_steal() {
  for (unsigned round = 0; round < spin_rounds_; ++round) {
    if (!(word_.load(std::memory_order_relaxed) & kLocked) && try_acquire()) return true;
    cpu_relax();
  }
  return false;
}

// Like the kernel's woken first waiter, spin a little on a held lock before counting a loss.
void StealMutex::spin_while_locked() const {
  for (unsigned round = 0; round < spin_rounds_; ++round) {
    if (!(word_.load(std::memory_order_relaxed) & kLocked)) return;
    cpu_relax();
  }
}

void StealMutex::wait_in_queue(Waiter& self) {
  for (;;) {
    if (self.sleep() == Waiter::kOwner) return;
    notify([](Observer& observer) { observer.waking(); });
    // Running now: unlocks from here on must wake us again if we lose.
    word_.fetch_and(~kWakePending, std::memory_order_relaxed);
    notify([](Observer& observer) { observer.woken(); });
    spin_while_locked();
    if (compete_as_first(self)) return;
    notify([&self](Observer& observer) { observer.lost(self.losses); });
  }
}

// Woken by an unlock that released the lock: take it unless a running contender got there first.
bool StealMutex::compete_as_first(Waiter& self) {
  LockGuard guard(wait_lock_);
  if (self.owns_lock()) return true;  // we had requested a handoff, and it came meanwhile
  std::uint32_t seen = word_.load(std::memory_order_relaxed);
  while (!(seen & kLocked)) {
    // Leave the queue: we are no longer counted, and a wake-up pending for us is ours to consume
    // (an unlock may have marked one since we cleared the mark). A free word has no kHandoff.
    const std::uint32_t taken = ((seen - kOneWaiter) & ~kWakePending) | kLocked;
    if (word_.compare_exchange_weak(seen, taken, std::memory_order_acquire,
                                    std::memory_order_relaxed)) {
      queue_.pop_front();
      return true;
    }
  }
  if (++self.losses >= handoff_after_) request_handoff(seen);
  return false;
}

// Only while the lock is held: then its unlock hands it over instead of releasing it. If it was
// released meanwhile, that unlock wakes us (it saw us counted) and we compete once more.
void StealMutex::request_handoff(std::uint32_t seen) {
  while ((seen & kLocked) && !(seen & kHandoff) &&
         !word_.compare_exchange_weak(seen, seen | kHandoff, std::memory_order_relaxed,
                                      std::memory_order_relaxed)) {
  }
}

void StealMutex::release_contended(std::uint32_t seen) {
  // Release first, and only then wake the first waiter, as the kernel does: the lock is up for
  // grabs while we take the wait lock. One compare-and-swap releases, checks for a handoff request
  // and marks the wake-up pending, so that only the first of several unlocks before the woken
  // waiter runs pays for the wake-up.
  // With a steal window, the unlock that sets the mark reads the clock before its compare-and-swap
  // (see within_steal_window) and stores the time after it, before the wake-up.
  std::int64_t released_at = 0;
  std::uint32_t released;
  do {
    if (seen & kHandoff) return hand_over();
    released = seen & ~kLocked;
    if (coalesce_wakeups_ && detail::waiters_in(seen) > 0) released |= kWakePending;
    if (steal_window_.count() > 0 && released_at == 0 && (released & ~seen & kWakePending))
      released_at = now_ns();
  } while (!word_.compare_exchange_weak(seen, released, std::memory_order_release,
                                        std::memory_order_relaxed));
  if (detail::waiters_in(seen) > 0 && !(seen & kWakePending)) {
    if (steal_window_.count() > 0) wake_marked_at_ns_.store(released_at, std::memory_order_relaxed);
    wake_first();
  }
}

// The first waiter stays first: it is told to compete, and leaves the queue when it wins.
void StealMutex::wake_first() {
  PendingWake wake;
  {
    LockGuard guard(wait_lock_);
    if (queue_.empty()) return;  // the first waiter has taken the lock meanwhile
    wake = queue_.front().tell(Waiter::kWoken);
  }
  wake.send();
}

void StealMutex::hand_over() {
  PendingWake wake;
  {
    LockGuard guard(wait_lock_);
    // kHandoff is set only by the first waiter, so it is there. The word keeps kLocked, now on its
    // behalf; a wake-up pending for it is served too. Only the first waiter may change the word
    // meanwhile (clearing kWakePending): it is locked, a handoff is pending, and queuing needs the
    // wait lock.
    Waiter& next = queue_.front();
    queue_.pop_front();
    std::uint32_t seen = word_.load(std::memory_order_relaxed);
    while (!word_.compare_exchange_weak(seen, (seen - kOneWaiter) & ~(kHandoff | kWakePending),
                                        std::memory_order_relaxed, std::memory_order_relaxed)) {
    }
    wake = next.tell(Waiter::kOwner);
  }
  wake.send();
}

}  // namespace cused::sync
