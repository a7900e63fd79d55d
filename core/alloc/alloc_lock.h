// SPDX-License-Identifier: GPL-2.0-only
// The allocator's metadata lock (binder_alloc.mutex, or the spinlock of the spin designs), one
// concrete type per kind, so that a design names the lock it takes and clang checks every field it
// guards; no flag is read and no virtual call is made per lock operation.
//
// Why these primitives: a design that holds its metadata lock across page installation (mutex)
// needs a sleeping lock (a futex mutex), because installation makes system calls and may block in
// the kernel's page allocator, where a spinning waiter would burn a CPU for microseconds. Being the
// allocator's mutex, it behaves as the device variant's lock_policy= says (sync::PolicyMutex,
// docs/locking.md), like the proc and node locks. The spin designs hold their lock only for
// pointer work (tens of nanoseconds), where a futex round trip would cost more than the critical
// section, so they use sync::SpinLock, which spins on reads with pause and yields after a bounded
// number of rounds (a userspace holder may have been preempted before it disabled preemption).
// Both emit the cused_lock_* events as lock=alloc with the design's trace id (core/lock_trace.h).
#pragma once

#include <cstdint>

#include "core/lock_trace.h"
#include "core/sync/lock_policy.h"
#include "core/sync/preemption.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"
#include "core/traced_mutex.h"

namespace cused::core::alloc {

// The sleeping metadata lock (alloc->mutex), traced as lock=alloc.
using SleepingAllocLock = TracedMutex<TracedLock::alloc>;

// The spinning metadata lock (alloc->lock of the spin designs), traced as lock=alloc policy=none.
// Its holder runs with preemption disabled until it has released it, as under the kernel's
// spin_lock()/spin_unlock() (core/sync/preemption.h): it is never a preempted low-priority thread,
// while the mutex's holder can be. The kernel disables preemption before it spins; here a waiter
// spins at its own priority and disables preemption once it holds the lock, because a userspace
// waiter spinning unpreemptible could keep a preempted ordinary holder off its CPU. The price: a
// holder serving a less urgent caller holds the lock one sched_setattr longer (about 2 us,
// docs/performance.md) than the kernel's holder, whose preempt_disable is free.
class CUSED_CAPABILITY("spinlock") AllocSpinLock {
 public:
  // `policy` is ignored (a spinlock has none); the signature is SleepingAllocLock's, so that
  // PageSpace builds either the same way.
  AllocSpinLock(sync::LockPolicy /*policy*/, std::uint8_t design)
      : trace_(TracedLock::alloc, design, kNoLockPolicy) {}
  AllocSpinLock(const AllocSpinLock&) = delete;
  AllocSpinLock& operator=(const AllocSpinLock&) = delete;

  // The analysis sees one capability; the forwarding through the trace is hidden from it.
  void lock() CUSED_ACQUIRE() CUSED_NO_THREAD_SAFETY_ANALYSIS { trace_.lock(Raw{*this}); }
  bool try_lock() CUSED_TRY_ACQUIRE(true) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    return trace_.try_lock(Raw{*this});
  }
  void unlock() CUSED_RELEASE() CUSED_NO_THREAD_SAFETY_ANALYSIS { trace_.unlock(Raw{*this}); }

 private:
  // The lock itself, untraced.
  struct Raw {
    AllocSpinLock& owner;
    void lock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
      owner.spin_.lock();
      sync::preempt_disable();
    }
    bool try_lock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
      if (!owner.spin_.try_lock()) return false;
      sync::preempt_disable();
      return true;
    }
    void unlock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
      owner.spin_.unlock();
      sync::preempt_enable();
    }
  };

  sync::SpinLock spin_;
  LockTrace trace_;
};

}  // namespace cused::core::alloc
