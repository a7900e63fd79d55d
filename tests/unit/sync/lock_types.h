// SPDX-License-Identifier: GPL-2.0-only
// The locks every sync test runs against: each policy's own class, each policy through
// PolicyMutex (the type the proc and node locks use), and the spinlock.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <cstdint>
#include <string>

#include "core/sync/cpu_relax.h"
#include "core/sync/handoff_mutex.h"
#include "core/sync/lock_guard.h"
#include "core/sync/lock_policy.h"
#include "core/sync/mutex.h"
#include "core/sync/policy_mutex.h"
#include "core/sync/spin_then_park_mutex.h"
#include "core/sync/spinlock.h"
#include "core/sync/steal_mutex.h"
#include "core/sync/thread_annotations.h"

namespace cused::sync::testing {

template <LockPolicy kPolicy>
class CUSED_CAPABILITY("mutex") PolicyMutexOf : public PolicyMutex {
 public:
  PolicyMutexOf() : PolicyMutex(kPolicy) {}
};

// Steals are most frequent without spinning: the woken waiter loses more often and the handoff
// request path runs.
class CUSED_CAPABILITY("mutex") StealMutexNoSpin : public StealMutex {
 public:
  StealMutexNoSpin() : StealMutex({.spin_rounds = 0}) {}
};

// Never requests a handoff: pure stealing, the woken waiter may lose any number of times.
class CUSED_CAPABILITY("mutex") StealMutexNoHandoff : public StealMutex {
 public:
  StealMutexNoHandoff() : StealMutex({.spin_rounds = 0, .handoff_after = UINT_MAX}) {}
};

// Wakes the first waiter on every unlock with waiters, as the kernel does (no kWakePending).
class CUSED_CAPABILITY("mutex") StealMutexEveryUnlockWakes : public StealMutex {
 public:
  StealMutexEveryUnlockWakes() : StealMutex({.spin_rounds = 0, .coalesce_wakeups = false}) {}
};

using AllLocks =
    ::testing::Types<Mutex, SpinThenParkMutex, HandoffMutex, StealMutex, StealMutexNoSpin,
                     StealMutexNoHandoff, StealMutexEveryUnlockWakes, SpinLock,
                     PolicyMutexOf<LockPolicy::kBarging>, PolicyMutexOf<LockPolicy::kSpinThenPark>,
                     PolicyMutexOf<LockPolicy::kHandoff>, PolicyMutexOf<LockPolicy::kSteal>,
                     PolicyMutexOf<LockPolicy::kStealWindow>>;

// A counter whose increment is a non-atomic read-modify-write, with a window in which a second
// holder would lose an increment (and which TSan reports as a race unless the lock orders the
// holders).
template <typename Lock>
struct GuardedCounter {
  Lock lock;
  std::uint64_t value CUSED_GUARDED_BY(lock) = 0;

  void increment() CUSED_REQUIRES(lock) {
    const std::uint64_t before = value;
    cpu_relax();
    value = before + 1;
  }
  std::uint64_t read() {
    LockGuard guard(lock);
    return value;
  }
};

// Test names, in AllLocks' order.
struct LockNames {
  template <typename Lock>
  static std::string GetName(int index) {
    static constexpr std::array kNames = {"Mutex",
                                          "SpinThenParkMutex",
                                          "HandoffMutex",
                                          "StealMutex",
                                          "StealMutexNoSpin",
                                          "StealMutexNoHandoff",
                                          "StealMutexEveryUnlockWakes",
                                          "SpinLock",
                                          "PolicyMutex_barging",
                                          "PolicyMutex_spin_then_park",
                                          "PolicyMutex_handoff",
                                          "PolicyMutex_steal",
                                          "PolicyMutex_steal_window"};
    return kNames.at(index);
  }
};

}  // namespace cused::sync::testing
