// SPDX-License-Identifier: GPL-2.0-only
// Mutual exclusion and try_lock semantics of every lock policy (issue 9, docs/design.md section 4):
// whatever the policy, two threads never hold a lock at once, or binder's proc and node state
// would be corrupted.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "core/sync/lock_guard.h"
#include "tests/unit/sync/lock_types.h"
#include "tests/unit/sync/sync_test_util.h"

namespace cused::sync::testing {
namespace {

constexpr int kThreads = 8;
constexpr int kRounds = 4000;

template <typename Lock>
class MutualExclusion : public ::testing::Test {};
TYPED_TEST_SUITE(MutualExclusion, AllLocks, LockNames);

TYPED_TEST(MutualExclusion, ContendedNonAtomicIncrementsAreNeverLost) {
  GuardedCounter<TypeParam> counter;
  run_threads(kThreads, [&](int) {
    for (int i = 0; i < kRounds; ++i) {
      LockGuard guard(counter.lock);
      counter.increment();
    }
  });
  EXPECT_EQ(counter.read(), std::uint64_t{kThreads} * kRounds);
}

// Half the threads take the lock with lock(), half poll with try_lock(): a try_lock that succeeds
// while another thread holds the lock (or while a handoff to a waiter is pending) loses updates.
TYPED_TEST(MutualExclusion, TryLockWinnersExcludeLockHolders) {
  GuardedCounter<TypeParam> counter;
  run_threads(kThreads, [&](int thread) {
    for (int i = 0; i < kRounds / 4; ++i) {
      if (thread % 2 == 0) {
        LockGuard guard(counter.lock);
        counter.increment();
        continue;
      }
      while (!counter.lock.try_lock()) std::this_thread::yield();
      counter.increment();
      counter.lock.unlock();
    }
  });
  EXPECT_EQ(counter.read(), std::uint64_t{kThreads} * (kRounds / 4));
}

// try_lock from another thread, which releases what it got.
template <typename Lock>
bool try_lock_elsewhere(Lock& lock) {
  bool acquired = false;
  std::jthread([&] { acquired = try_lock_and_release(lock); }).join();
  return acquired;
}

TYPED_TEST(MutualExclusion, TryLockFailsExactlyWhileTheLockIsHeld) {
  TypeParam lock;
  EXPECT_TRUE(try_lock_elsewhere(lock)) << "a free lock";
  lock.lock();
  EXPECT_FALSE(try_lock_elsewhere(lock)) << "held by this thread";
  lock.unlock();
  EXPECT_TRUE(try_lock_elsewhere(lock)) << "released by its holder";
}

}  // namespace
}  // namespace cused::sync::testing
