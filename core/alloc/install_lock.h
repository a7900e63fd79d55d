// spin-install's install mutex (docs/allocator.md): a sync::PolicyMutex that emits the
// cused_lock_* events as lock=alloc_install (lock_trace.h), so that a trace of spin-install shows
// its waits beside the mutex design's waits on lock=alloc.
#pragma once

#include <cstdint>

#include "core/alloc/lock_trace.h"
#include "core/alloc/variant.h"
#include "core/sync/lock_policy.h"
#include "core/sync/policy_mutex.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

class CUSED_CAPABILITY("mutex") InstallLock {
 public:
  InstallLock(LockVariant variant, sync::LockPolicy policy)
      : mutex_(policy),
        trace_(TracedLock::alloc_install, variant, static_cast<std::uint64_t>(policy)) {}
  InstallLock(const InstallLock&) = delete;
  InstallLock& operator=(const InstallLock&) = delete;

  sync::LockPolicy policy() const { return mutex_.policy(); }

  // As AllocLock's: the analysis sees one capability, the forwarding is hidden from it.
  void lock() CUSED_ACQUIRE() CUSED_NO_THREAD_SAFETY_ANALYSIS { trace_.lock(mutex_); }
  bool try_lock() CUSED_TRY_ACQUIRE(true) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    return trace_.try_lock(mutex_);
  }
  void unlock() CUSED_RELEASE() CUSED_NO_THREAD_SAFETY_ANALYSIS { trace_.unlock(mutex_); }

 private:
  sync::PolicyMutex mutex_;
  LockTrace trace_;
};

}  // namespace cused::core::alloc
