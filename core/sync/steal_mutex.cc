#include "core/sync/steal_mutex.h"

#include <algorithm>

#include "core/sync/cpu_relax.h"
#include "core/sync/lock_guard.h"

namespace cused::sync {

using detail::kLocked;
using detail::kOneWaiter;
using detail::Waiter;

StealMutex::StealMutex(unsigned spin_rounds, unsigned handoff_after)
    : spin_rounds_(spin_rounds), handoff_after_(std::max(handoff_after, 1u)) {}

void StealMutex::acquire_contended() {
  if (spin_to_steal()) return;
  Waiter self;
  {
    LockGuard guard(wait_lock_);
    if (detail::lock_word_or_queue(word_, queue_, self)) return;
  }
  wait_in_queue(self);
}

// The optimistic spin of a running contender: it may take the lock whenever it is free, even with
// waiters queued (the steal).
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
    notify_woken();
    spin_while_locked();
    if (compete_as_first(self)) return;
    notify_lost(self.losses);
  }
}

// Woken by an unlock that released the lock: take it unless a running contender got there first.
bool StealMutex::compete_as_first(Waiter& self) {
  LockGuard guard(wait_lock_);
  if (self.owns_lock()) return true;  // we had requested a handoff, and it came meanwhile
  std::uint32_t seen = word_.load(std::memory_order_relaxed);
  while (!(seen & kLocked)) {
    // Leave the queue: we are no longer counted. (A free word has no kHandoff.)
    const std::uint32_t taken = (seen - kOneWaiter) | kLocked;
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
  // Release first, and only then look for the waiter to wake, as the kernel does: the lock is up
  // for grabs while we take the wait lock. The compare-and-swap makes the release atomic with the
  // check for a handoff request.
  do {
    if (seen & kHandoff) return hand_over();
  } while (!word_.compare_exchange_weak(seen, seen & ~kLocked, std::memory_order_release,
                                        std::memory_order_relaxed));
  if (detail::waiters_in(seen) > 0) wake_first();
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
    // kHandoff is set only by the first waiter, so it is there. The word stays kLocked, now on its
    // behalf; nobody else changes the word meanwhile (it is locked and a handoff is pending, and
    // queuing needs the wait lock).
    Waiter& next = queue_.front();
    queue_.pop_front();
    word_.fetch_sub(kOneWaiter + kHandoff, std::memory_order_relaxed);
    wake = next.tell(Waiter::kOwner);
  }
  wake.send();
}

void StealMutex::notify_woken() {
  if (observer_ == nullptr) return;
  divert_begin();
  observer_->woken();
  divert_end();
}

void StealMutex::notify_lost(unsigned losses) {
  if (observer_ == nullptr) return;
  divert_begin();
  observer_->lost(losses);
  divert_end();
}

}  // namespace cused::sync
