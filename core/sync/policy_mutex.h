// SPDX-License-Identifier: GPL-2.0-only
// sync::PolicyMutex: a sleeping lock whose policy (barging, spin-then-park, handoff, steal,
// steal-window) is chosen when it is constructed. The proc and node locks are PolicyMutexes, so the
// lock_policy= of a device's variant decides how the locks of the procs opened afterwards behave.
//
// Dispatch cost. The policy never changes after construction, so each lock()/unlock() is a switch
// on the variant's index, a branch that is perfectly predicted at any call site that keeps seeing
// one policy, followed by that policy's inlined fast path (one compare-and-swap). A virtual
// interface would add an indirect call the compiler cannot inline, a vtable pointer per lock, and
// a heap allocation or a union anyway to hold the implementation. tests/bench/lock_policies_bench
// measures what the switch costs against a plain sync::Mutex (BM_Uncontended, docs/performance.md).
#pragma once

#include <variant>

#include "core/sync/handoff_mutex.h"
#include "core/sync/lock_policy.h"
#include "core/sync/mutex.h"
#include "core/sync/spin_then_park_mutex.h"
#include "core/sync/steal_mutex.h"
#include "core/sync/thread_annotations.h"

namespace cused::sync {

class CUSED_CAPABILITY("mutex") PolicyMutex {
 public:
  explicit PolicyMutex(LockPolicy policy = LockPolicy::kBarging) : impl_(make(policy)) {}
  PolicyMutex(const PolicyMutex&) = delete;
  PolicyMutex& operator=(const PolicyMutex&) = delete;

  LockPolicy policy() const { return static_cast<LockPolicy>(impl_.index()); }

  // Each policy's lock annotates itself for TSan; this wrapper only dispatches.
  void lock() CUSED_ACQUIRE() {
    std::visit([](auto& lock) { lock_one(lock); }, impl_);
  }
  bool try_lock() CUSED_TRY_ACQUIRE(true) {
    return std::visit([](auto& lock) { return try_lock_one(lock); }, impl_);
  }
  void unlock() CUSED_RELEASE() {
    std::visit([](auto& lock) { unlock_one(lock); }, impl_);
  }

 private:
  // Alternatives in LockPolicy's order, so that the index is the policy (steal-window is a tuning
  // of StealMutex, hence the type twice, and construction by index).
  using Impl = std::variant<Mutex, SpinThenParkMutex, HandoffMutex, StealMutex, StealMutex>;
  static_assert(std::variant_size_v<Impl> == kLockPolicies.size());
  static Impl make(LockPolicy policy);

  // -Wthread-safety checks the callers of lock()/unlock(); these only forward to the policy's lock.
  template <typename Lock>
  static void lock_one(Lock& lock) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    lock.lock();
  }
  template <typename Lock>
  static bool try_lock_one(Lock& lock) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    return lock.try_lock();
  }
  template <typename Lock>
  static void unlock_one(Lock& lock) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    lock.unlock();
  }

  Impl impl_;
};

}  // namespace cused::sync
