// A sleeping futex mutex (Drepper's three-state mutex: 0 free, 1 locked, 2 locked with waiters).
// Unlock releases the word and wakes one waiter, and anyone may take the lock meanwhile: the
// "barging" behaviour of the kernel's mutex without optimistic spinning. core/sync adds the
// handoff and steal policies beside it; this one is the baseline every lock experiment compares to.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/sync/thread_annotations.h"

namespace cused::sync {

class CUSED_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() CUSED_ACQUIRE() {
    std::uint32_t expected = 0;
    if (state_.compare_exchange_strong(expected, 1, std::memory_order_acquire)) return;
    lock_slow();
  }
  bool try_lock() CUSED_TRY_ACQUIRE(true) {
    std::uint32_t expected = 0;
    return state_.compare_exchange_strong(expected, 1, std::memory_order_acquire);
  }
  void unlock() CUSED_RELEASE() {
    if (state_.exchange(0, std::memory_order_release) == 2) wake_one();
  }

 private:
  void lock_slow();
  void wake_one();
  std::atomic<std::uint32_t> state_{0};
};

// RAII holder for any of core/sync's capabilities, visible to -Wthread-safety.
template <typename Lock>
class CUSED_SCOPED_CAPABILITY LockGuard {
 public:
  explicit LockGuard(Lock& lock) CUSED_ACQUIRE(lock) : lock_(lock) { lock_.lock(); }
  ~LockGuard() CUSED_RELEASE() { lock_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  Lock& lock_;
};

}  // namespace cused::sync
