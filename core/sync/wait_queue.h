// SPDX-License-Identifier: GPL-2.0-only
// The lock word and FIFO wait queue shared by the queued lock policies (HandoffMutex, StealMutex).
// A queued thread lives on its own stack and sleeps on its own futex word, so that an unlock wakes
// exactly the thread it chose, never a herd.
#pragma once

#include <atomic>
#include <boost/intrusive/slist.hpp>
#include <cstdint>

#include "core/sync/futex.h"

namespace cused::sync::detail {

class Waiter : public boost::intrusive::slist_base_hook<> {
 public:
  // What the unlocker told this waiter (the futex word it sleeps on).
  enum Wake : std::uint32_t {
    kAsleep = 0,
    kWoken = 1,  // the lock was released: compete for it (steal policy)
    kOwner = 2,  // the lock was handed over: the waiter owns it now
  };

  // Returns what the waiter was told and resets the word, so that a later wake-up is not missed.
  Wake sleep() {
    while (wake_.load(std::memory_order_acquire) == kAsleep) futex_wait(wake_, kAsleep);
    return static_cast<Wake>(wake_.exchange(kAsleep, std::memory_order_acquire));
  }
  bool owns_lock() const { return wake_.load(std::memory_order_acquire) == kOwner; }

  // The unlocker's side, called while the waiter is known to be queued or about to run (it cannot
  // leave before it sees the store, which releases the unlocker's critical section to it). The
  // wake-up is sent later, after the unlocker has dropped its wait lock, when the waiter may be
  // gone already. None is needed when the waiter had been told kWoken and has not run yet.
  PendingWake tell(Wake wake) {
    if (wake_.exchange(wake, std::memory_order_release) == wake) return PendingWake();
    return PendingWake(wake_);
  }

  // Times this waiter was woken and found the lock taken by a running contender (steal policy).
  unsigned losses = 0;

 private:
  std::atomic<std::uint32_t> wake_{kAsleep};
};

// FIFO of waiters, O(1) at both ends, two pointers. Its length is kept in the lock word.
using WaitQueue = boost::intrusive::slist<Waiter, boost::intrusive::cache_last<true>,
                                          boost::intrusive::constant_time_size<false>>;

// The lock word of the queued policies: kLocked, policy flags below bit 8, and from bit 8 up the
// number of queued waiters. The count changes only under the wait lock that guards the queue. With
// waiters in the word, an uncontended unlock is one compare-and-swap from kLocked to 0 and fails
// whenever someone is queued; and the queue length can be read without the wait lock.
inline constexpr std::uint32_t kLocked = 1;
inline constexpr std::uint32_t kOneWaiter = 1u << 8;
inline constexpr std::uint32_t waiters_in(std::uint32_t word) { return word / kOneWaiter; }

// Takes any free word: the rule of HandoffMutex and of StealMutex without a steal window.
inline constexpr auto kAnyFreeWord = [](std::uint32_t) { return true; };

// Sets kLocked if it is clear and may_take(word) allows it, whether threads are queued or not. The
// first attempt assumes a word of 0 and so is a single compare-and-swap; may_take is consulted only
// for a word with other bits set (StealMutex's steal window reads the clock there).
template <typename MayTake = decltype(kAnyFreeWord)>
bool try_lock_word(std::atomic<std::uint32_t>& word, MayTake may_take = kAnyFreeWord) {
  std::uint32_t seen = 0;
  while (!word.compare_exchange_weak(seen, seen | kLocked, std::memory_order_acquire,
                                     std::memory_order_relaxed))
    if ((seen & kLocked) || !may_take(seen)) return false;
  return true;
}

// Clears a word that holds just kLocked. Otherwise returns false with the word in `seen`: the
// unlock has waiters to deal with.
inline bool unlock_word_if_alone(std::atomic<std::uint32_t>& word, std::uint32_t& seen) {
  seen = kLocked;
  return word.compare_exchange_strong(seen, 0, std::memory_order_release,
                                      std::memory_order_relaxed);
}

// Called with the queue's wait lock held: takes the lock as try_lock_word does, or else counts
// `self` in the word and queues it last. Holding the wait lock makes this atomic against the
// unlock's slow path, which takes the wait lock too: the unlock either frees the word before we
// look at it, or sees us counted and finds us queued. A free word that may_take refuses is queued
// on too (StealMutex's steal window: the lock is reserved for a woken waiter that is about to run,
// and whose own unlock will wake the next one).
template <typename MayTake = decltype(kAnyFreeWord)>
bool lock_word_or_queue(std::atomic<std::uint32_t>& word, WaitQueue& queue, Waiter& self,
                        MayTake may_take = kAnyFreeWord) {
  std::uint32_t seen = word.load(std::memory_order_relaxed);
  for (;;) {
    if (!(seen & kLocked) && may_take(seen)) {
      if (word.compare_exchange_weak(seen, seen | kLocked, std::memory_order_acquire,
                                     std::memory_order_relaxed))
        return true;
    } else if (word.compare_exchange_weak(seen, seen + kOneWaiter, std::memory_order_relaxed,
                                          std::memory_order_relaxed)) {
      queue.push_back(self);
      return false;
    }
  }
}

}  // namespace cused::sync::detail
