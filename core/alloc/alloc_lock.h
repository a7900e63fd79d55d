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
// number of rounds (a userspace holder may be preemptible: one serving a caller as urgent as the
// daemon disables nothing, core/sync/preemption.h).
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
// As under the kernel's spin_lock()/spin_unlock(), preemption is disabled (core/sync/
// preemption.h) before the lock is taken and enabled after it is released, so the lock never has
// a holder that can be preempted, while the mutex's holder can be. Unlike the kernel's, a waiter
// does not spin with preemption disabled: it enables it again while the lock is held and
// disables it only to try the lock when it looks free, because a userspace waiter spinning
// unpreemptible could keep a preempted ordinary thread (a holder of another lock, or the daemon's
// own work) off its CPU. The price: a holder serving a less urgent caller pays two sched_setattr
// per section (about 4 µs, docs/performance.md), where the kernel's preempt_disable is free.
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
      while (!try_lock()) owner.spin_.wait_until_free();
    }
    bool try_lock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
      sync::preempt_disable();
      if (owner.spin_.try_lock()) return true;
      sync::preempt_enable();
      return false;
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
