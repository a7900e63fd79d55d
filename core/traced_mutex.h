// SPDX-License-Identifier: GPL-2.0-only
// A sync::PolicyMutex whose waits and holds are traced as cused_lock_* events (lock_trace.h) under
// the name `Name`: the engine's proc, node and context locks (locks.h) and spin-install's install
// mutex, so that a trace shows which of the kernel's locks a caller waited for, and behind whom.
#pragma once

#include <cstdint>

#include "core/lock_trace.h"
#include "core/sync/lock_policy.h"
#include "core/sync/policy_mutex.h"
#include "core/sync/thread_annotations.h"

namespace cused::core {

template <TracedLock Name>
class CUSED_CAPABILITY("mutex") TracedMutex {
 public:
  // `design` names the allocator design the lock belongs to (lock_trace.h): the engine's own
  // locks are plain sleeping locks.
  explicit TracedMutex(sync::LockPolicy policy = sync::LockPolicy::kBarging,
                       std::uint8_t design = kSleepingLockDesign)
      : mutex_(policy), trace_(Name, design, static_cast<std::uint64_t>(policy)) {}
  TracedMutex(const TracedMutex&) = delete;
  TracedMutex& operator=(const TracedMutex&) = delete;

  sync::LockPolicy policy() const { return mutex_.policy(); }

  // The analysis sees one capability; the forwarding to the PolicyMutex is hidden from it.
  void lock() CUSED_ACQUIRE() CUSED_NO_THREAD_SAFETY_ANALYSIS { trace_.lock(mutex_); }
  bool try_lock() CUSED_TRY_ACQUIRE(true) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    return trace_.try_lock(mutex_);
  }
  void unlock() CUSED_RELEASE() CUSED_NO_THREAD_SAFETY_ANALYSIS { trace_.unlock(mutex_); }

 private:
  sync::PolicyMutex mutex_;
  LockTrace trace_;
};

}  // namespace cused::core
