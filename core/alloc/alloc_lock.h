// The allocator's metadata lock (binder_alloc.mutex, or the spinlock of the spin designs). The
// kind is chosen per allocator at construction (LockVariant) and never changes, so the branch in
// lock()/unlock() always goes the same way and costs nothing measurable next to the lock itself;
// in exchange every field it guards carries one CUSED_GUARDED_BY that clang checks for all
// variants at once.
//
// Why these primitives: the mutex variant sleeps (sync::Mutex, a futex mutex) because it is held
// across page installation, which makes system calls and may block in the kernel's page
// allocator; a spinning waiter there would burn a CPU for microseconds. The spin variants hold
// the lock only for pointer work (tens of nanoseconds), where a futex round trip would cost more
// than the critical section, so they use sync::SpinLock, which spins on reads with pause and
// yields after a bounded number of rounds (a userspace holder can be preempted, which a kernel
// spinlock holder cannot).
#pragma once

#include "core/sync/mutex.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

class CUSED_CAPABILITY("mutex") AllocLock {
 public:
  explicit AllocLock(bool sleeping) : sleeping_(sleeping) {}
  AllocLock(const AllocLock&) = delete;
  AllocLock& operator=(const AllocLock&) = delete;

  bool sleeping() const { return sleeping_; }

  // The forwarding itself is invisible to the analysis (it would see mutex_ acquired and kept);
  // callers see one capability.
  void lock() CUSED_ACQUIRE() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    if (sleeping_)
      mutex_.lock();
    else
      spin_.lock();
  }
  bool try_lock() CUSED_TRY_ACQUIRE(true) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    return sleeping_ ? mutex_.try_lock() : spin_.try_lock();
  }
  void unlock() CUSED_RELEASE() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    if (sleeping_)
      mutex_.unlock();
    else
      spin_.unlock();
  }

 private:
  const bool sleeping_;
  sync::Mutex mutex_;
  sync::SpinLock spin_;
};

}  // namespace cused::core::alloc
