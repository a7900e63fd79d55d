// A test-and-test-and-set spinlock for short critical sections (the allocator's metadata lock in
// the spin variants, like the kernel's spinlock_t). It spins politely: reads the lock word until
// it looks free (no cache-line ping-pong), pauses the CPU between reads, and after a bounded
// number of rounds yields the CPU, because in userspace the holder may have been preempted, which
// a kernel spinlock never has to consider.
#pragma once

#include <atomic>

#include "core/sync/thread_annotations.h"

namespace cused::sync {

class CUSED_CAPABILITY("spinlock") SpinLock {
 public:
  SpinLock() = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  void lock() CUSED_ACQUIRE() {
    for (unsigned round = 0;; ++round) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) relax(round);
    }
  }
  bool try_lock() CUSED_TRY_ACQUIRE(true) {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() CUSED_RELEASE() { locked_.store(false, std::memory_order_release); }

 private:
  static void relax(unsigned round);
  std::atomic<bool> locked_{false};
};

}  // namespace cused::sync
