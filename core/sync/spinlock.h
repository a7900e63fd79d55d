// SPDX-License-Identifier: GPL-2.0-only
// sync::SpinLock: a test-and-test-and-set spinlock for short critical sections (the allocator's
// metadata lock in the spin variants, like the kernel's spinlock_t). A contender reads the word
// until it looks free (no cache-line ping-pong while it waits) with exponential backoff between
// reads, and after a bounded spin yields the CPU, because in userspace the holder may have been
// preempted, which a kernel spinlock never has to consider (core/sync/cpu_relax.h says why both).
#pragma once

#include <atomic>

#include "core/sync/lock_api.h"
#include "core/sync/thread_annotations.h"

namespace cused::sync {

class CUSED_CAPABILITY("spinlock") SpinLock : public LockApi<SpinLock> {
 public:
  SpinLock() = default;

  // Spins until the lock looks free, without taking it (the same reads, backoff and yields as a
  // contended lock()): for a caller that does something between seeing it free and trying it
  // (core/alloc/alloc_lock.h disables preemption there, as the kernel's spin_lock does before it
  // takes the lock).
  void wait_until_free() const;

 private:
  friend class LockApi<SpinLock>;
  void acquire() {
    if (locked_.exchange(true, std::memory_order_acquire)) acquire_contended();
  }
  bool try_acquire() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void release() { locked_.store(false, std::memory_order_release); }

  void acquire_contended();

  std::atomic<bool> locked_{false};
};

}  // namespace cused::sync
