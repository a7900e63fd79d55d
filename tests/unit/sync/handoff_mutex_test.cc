// SPDX-License-Identifier: GPL-2.0-only
// The handoff policy's rules (issue 9, lock_policy=handoff, docs/locking.md): queued threads get
// the lock in the order they queued, and an unlock that finds waiters transfers ownership, so
// nobody can take the lock until the new owner releases it.
#include "core/sync/handoff_mutex.h"

#include <gtest/gtest.h>

#include <latch>
#include <thread>
#include <vector>

#include "core/sync/lock_guard.h"
#include "tests/unit/sync/sync_test_util.h"

namespace cused::sync::testing {
namespace {

TEST(HandoffMutex, QueuedThreadsAcquireInTheOrderTheyQueued) {
  constexpr int kThreads = 8;
  HandoffMutex lock;
  std::vector<int> order;  // appended under `lock`
  lock.lock();
  std::vector<std::jthread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      LockGuard guard(lock);
      order.push_back(i);
    });
    // Thread i is queued before thread i + 1 starts: the arrival order is known.
    wait_until([&] { return lock.waiters() == static_cast<std::size_t>(i) + 1; },
               "the thread to queue");
  }
  lock.unlock();
  threads.clear();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(lock.waiters(), 0u);
}

TEST(HandoffMutex, TryLockFailsWhileAHandoffIsPending) {
  HandoffMutex lock;
  std::latch release_it(1);
  lock.lock();
  std::jthread waiter([&] {
    LockGuard guard(lock);
    release_it.wait();
  });
  wait_until([&] { return lock.waiters() == 1; }, "the waiter to queue");
  lock.unlock();  // the lock now belongs to `waiter`, whether it has run yet or not
  EXPECT_FALSE(try_lock_and_release(lock));
  release_it.count_down();
  waiter.join();
  EXPECT_TRUE(try_lock_and_release(lock)) << "released by the waiter";
}

}  // namespace
}  // namespace cused::sync::testing
