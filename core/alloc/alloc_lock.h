// The allocator's metadata lock (binder_alloc.mutex, or the spinlock of the spin designs). The
// kind is chosen per allocator at construction (LockVariant) and never changes, so the branch in
// lock()/unlock() always goes the same way and costs nothing measurable next to the lock itself;
// in exchange every field it guards carries one CUSED_GUARDED_BY that clang checks for all
// variants at once.
//
// Why these primitives: the mutex variant sleeps (a futex mutex) because it is held across page
// installation, which makes system calls and may block in the kernel's page allocator; a spinning
// waiter there would burn a CPU for microseconds. Being the allocator's mutex, it behaves as the
// device variant's lock_policy= says (sync::PolicyMutex, docs/locking.md), like the proc and node
// locks; the spinlock of the spin variants is not a mutex and has no policy. The spin variants hold
// the lock only for pointer work (tens of nanoseconds), where a futex round trip would cost more
// than the critical section, so they use sync::SpinLock, which spins on reads with pause and
// yields after a bounded number of rounds (a userspace holder may have been preempted before it
// disabled preemption, see lock() below).
#pragma once

#include <cstdint>

#include "core/alloc/variant.h"
#include "core/lock_trace.h"
#include "core/sync/lock_policy.h"
#include "core/sync/policy_mutex.h"
#include "core/sync/preemption.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

class CUSED_CAPABILITY("mutex") AllocLock {
 public:
  // The mutex variant sleeps; spin and spin-install spin.
  AllocLock(LockVariant variant, sync::LockPolicy policy)
      : sleeping_(variant == LockVariant::mutex),
        mutex_(policy),
        trace_(TracedLock::alloc, static_cast<std::uint8_t>(variant),
               sleeping_ ? static_cast<std::uint64_t>(policy) : kNoLockPolicy) {}
  AllocLock(const AllocLock&) = delete;
  AllocLock& operator=(const AllocLock&) = delete;

  bool sleeping() const { return sleeping_; }
  // The policy of the sleeping lock; meaningless (never used) when the lock spins.
  sync::LockPolicy policy() const { return mutex_.policy(); }

  // The forwarding itself is invisible to the analysis (it would see mutex_ acquired and kept);
  // callers see one capability. The cused_lock_* events are the LockTrace's (lock_trace.h).
  void lock() CUSED_ACQUIRE() CUSED_NO_THREAD_SAFETY_ANALYSIS { trace_.lock(Raw{*this}); }
  bool try_lock() CUSED_TRY_ACQUIRE(true) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    return trace_.try_lock(Raw{*this});
  }
  void unlock() CUSED_RELEASE() CUSED_NO_THREAD_SAFETY_ANALYSIS { trace_.unlock(Raw{*this}); }

 private:
  // The lock itself, untraced.
  // The spinlock's holder runs with preemption disabled until it has released it, as under the
  // kernel's spin_lock()/spin_unlock() (core/sync/preemption.h): it is never a preempted
  // low-priority thread, while the mutex's holder can be. The kernel disables preemption before
  // it spins; here a waiter spins at its own priority and disables preemption once it holds the
  // lock, because a userspace waiter spinning unpreemptible could keep a preempted ordinary
  // holder off its CPU. The price: a holder serving a less urgent caller holds the lock one
  // sched_setattr longer (about 2 us, docs/performance.md) than the kernel's holder, whose
  // preempt_disable is free; it falls on the spin designs only.
  struct Raw {
    AllocLock& owner;
    void lock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
      if (owner.sleeping_) {
        owner.mutex_.lock();
      } else {
        owner.spin_.lock();
        sync::preempt_disable();
      }
    }
    bool try_lock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
      if (owner.sleeping_) return owner.mutex_.try_lock();
      if (!owner.spin_.try_lock()) return false;
      sync::preempt_disable();
      return true;
    }
    void unlock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
      if (owner.sleeping_) {
        owner.mutex_.unlock();
      } else {
        owner.spin_.unlock();
        sync::preempt_enable();
      }
    }
  };

  const bool sleeping_;
  sync::PolicyMutex mutex_;
  sync::SpinLock spin_;
  LockTrace trace_;
};

}  // namespace cused::core::alloc
