// The steal policy's rules (issue 9, lock_policy=steal, docs/locking.md), made deterministic with
// the mutex's observer hooks: the woken first waiter is held at the point where it would compete.
//  * an unlock with waiters releases the lock: a running contender may take it before the woken
//    waiter runs;
//  * the woken waiter that finds the lock taken stays first and sleeps again;
//  * after `handoff_after` such losses it requests a handoff, and the next unlock passes the lock
//    to it directly (the kernel's MUTEX_FLAG_HANDOFF, after one loss there).
#include "core/sync/steal_mutex.h"

#include <gtest/gtest.h>

#include <latch>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "core/sync/lock_guard.h"
#include "core/sync/mutex.h"
#include "tests/unit/sync/sync_test_util.h"

namespace cused::sync::testing {
namespace {

// Stops each woken waiter until the test lets it compete, and reports its losses.
class Referee : public StealMutex::Observer {
 public:
  void woken() override {
    woken_.release();
    compete_.acquire();
  }
  void lost(unsigned) override { lost_.release(); }

  void await_woken() { woken_.acquire(); }
  void let_compete() { compete_.release(); }
  void await_lost() { lost_.acquire(); }

 private:
  std::counting_semaphore<> woken_{0};
  std::counting_semaphore<> compete_{0};
  std::counting_semaphore<> lost_{0};
};

class StealMutexTest : public ::testing::Test {
 protected:
  // A thread that queues on `lock` (held by the test), records its turn, and holds the lock until
  // `release_waiter` opens.
  void start_waiter(StealMutex& lock, const std::string& name) {
    threads_.emplace_back([&lock, name, this] {
      LockGuard guard(lock);
      record(name);
      release_waiter_.wait();
    });
    const std::size_t queued = threads_.size();
    wait_until([&] { return lock.waiters() == queued; }, "the waiter to queue");
  }
  void record(const std::string& name) {
    LockGuard guard(order_lock_);
    order_.push_back(name);
  }
  std::vector<std::string> finish() {
    release_waiter_.count_down();
    threads_.clear();
    LockGuard guard(order_lock_);
    return order_;
  }

  Referee referee_;

 private:
  std::latch release_waiter_{1};
  std::vector<std::jthread> threads_;
  Mutex order_lock_;
  std::vector<std::string> order_ CUSED_GUARDED_BY(order_lock_);
};

TEST_F(StealMutexTest, ARunningContenderTakesTheLockBeforeTheWokenWaiter) {
  StealMutex lock(/*spin_rounds=*/0, /*handoff_after=*/1);
  lock.set_observer(&referee_);
  lock.lock();
  start_waiter(lock, "waiter");

  lock.unlock();  // releases the lock and wakes the waiter, which the referee holds
  referee_.await_woken();
  if (!lock.try_lock()) FAIL() << "the lock was not released for a running contender to steal";
  record("contender");
  EXPECT_EQ(lock.waiters(), 1u) << "the robbed waiter is still first in the queue";

  referee_.let_compete();
  referee_.await_lost();
  EXPECT_TRUE(lock.handoff_requested()) << "one loss requests a handoff (the kernel's rule)";
  lock.unlock();  // hands the lock to the waiter, which owns it before it even runs
  EXPECT_FALSE(try_lock_and_release(lock)) << "a pending handoff cannot be stolen";
  EXPECT_EQ(finish(), (std::vector<std::string>{"contender", "waiter"}));
  EXPECT_FALSE(lock.handoff_requested());
  EXPECT_EQ(lock.waiters(), 0u);
}

TEST_F(StealMutexTest, TheWaiterRequestsAHandoffOnlyAfterHandoffAfterLosses) {
  StealMutex lock(/*spin_rounds=*/0, /*handoff_after=*/2);
  lock.set_observer(&referee_);
  lock.lock();
  start_waiter(lock, "waiter");

  for (int loss = 1; loss <= 2; ++loss) {
    lock.unlock();
    referee_.await_woken();
    if (!lock.try_lock()) FAIL() << "steal " << loss << " failed";
    record("contender");
    referee_.let_compete();
    referee_.await_lost();
    EXPECT_EQ(lock.handoff_requested(), loss == 2) << "after loss " << loss;
  }
  lock.unlock();
  EXPECT_FALSE(try_lock_and_release(lock)) << "handed over after the second loss";
  EXPECT_EQ(finish(), (std::vector<std::string>{"contender", "contender", "waiter"}));
}

TEST_F(StealMutexTest, AWokenWaiterThatFindsTheLockFreeTakesItAndLeavesTheQueue) {
  StealMutex lock(/*spin_rounds=*/0);
  lock.set_observer(&referee_);
  lock.lock();
  start_waiter(lock, "first");
  start_waiter(lock, "second");

  lock.unlock();  // wakes only the first waiter; the second stays asleep behind it
  referee_.await_woken();
  referee_.let_compete();
  wait_until([&] { return lock.waiters() == 1; }, "the first waiter to take the lock");
  EXPECT_FALSE(lock.handoff_requested());
  referee_.let_compete();  // the second waiter, which the first one's unlock wakes
  EXPECT_EQ(finish(), (std::vector<std::string>{"first", "second"}));
}

}  // namespace
}  // namespace cused::sync::testing
