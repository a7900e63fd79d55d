// SPDX-License-Identifier: GPL-2.0-only
// The steal policy's rules (issue 9, lock_policy=steal, docs/locking.md), made deterministic with
// the mutex's observer hooks: the woken first waiter is held at the point where it would compete.
//  * an unlock with waiters releases the lock: a running contender may take it before the woken
//    waiter runs;
//  * the woken waiter that finds the lock taken stays first and sleeps again;
//  * after `handoff_after` such losses it requests a handoff, and the next unlock passes the lock
//    to it directly (the kernel's MUTEX_FLAG_HANDOFF, after one loss there).
// And the steal window (issue 33, lock_policy=steal-window, docs/locking.md "steal-window"): the
// woken waiter is held before it runs for the lock (kWakePending still set), where the window
// decides whether a running contender may take the released lock.
#include "core/sync/steal_mutex.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
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

// Stops each woken waiter until the test lets it compete, and reports its losses. With
// hold_after_loss, a waiter that lost also stops until the test lets it go back to sleep.
class Referee : public StealMutex::Observer {
 public:
  explicit Referee(bool hold_after_loss = false) : hold_after_loss_(hold_after_loss) {}

  void woken() override {
    woken_.release();
    compete_.acquire();
  }
  void lost(unsigned) override {
    lost_.release();
    if (hold_after_loss_) compete_.acquire();
  }

  void await_woken() { woken_.acquire(); }
  void let_compete() { compete_.release(); }
  void await_lost() { lost_.acquire(); }
  void let_sleep() { compete_.release(); }

 private:
  const bool hold_after_loss_;
  std::counting_semaphore<> woken_{0};
  std::counting_semaphore<> compete_{0};
  std::counting_semaphore<> lost_{0};
};

// Holds each woken waiter before it claims its wake-up (StealMutex::Observer::waking): for the lock
// it has not run yet, as if the scheduler had not got to it.
class Scheduler : public StealMutex::Observer {
 public:
  void waking() override {
    waking_.release();
    run_.acquire();
  }

  void await_waking() { waking_.acquire(); }
  void let_run() { run_.release(); }

 private:
  std::counting_semaphore<> waking_{0};
  std::counting_semaphore<> run_{0};
};

class StealMutexTest : public ::testing::Test {
 protected:
  // A thread that queues on `lock` (held by the test), records its turn, and holds the lock until
  // `release_waiter` opens.
  void start_waiter(StealMutex& lock, const std::string& name) {
    threads_.emplace_back([&lock, name, this] {
      {
        LockGuard guard(lock);
        record(name);
        release_waiter_.wait();
      }
      waiters_done_.fetch_add(1);
    });
    // A thread that takes the lock instead of queuing is a failure for the test to report.
    const std::size_t queued = threads_.size();
    wait_until([&] { return lock.waiters() == queued || recorded(name); }, "the waiter to queue");
  }
  void record(const std::string& name) {
    LockGuard guard(order_lock_);
    order_.push_back(name);
  }
  bool recorded(const std::string& name) {
    LockGuard guard(order_lock_);
    return std::find(order_.begin(), order_.end(), name) != order_.end();
  }
  // Queues "waiter" behind the test and releases the lock: the unlock marks a wake-up pending and
  // wakes the waiter, which `scheduler` holds before it runs. Returns `pause` after that.
  void release_to_held_waiter(StealMutex& lock, Scheduler& scheduler,
                              std::chrono::nanoseconds pause) {
    lock.set_observer(&scheduler);
    lock.lock();
    start_waiter(lock, "waiter");
    lock.unlock();
    scheduler.await_waking();
    std::this_thread::sleep_for(pause);
  }
  // `pause` after the release to the held waiter, a running contender's try_lock takes the lock
  // first; the waiter loses once and gets a handoff.
  void expect_steal_before_pickup(StealMutex::Tuning tuning, std::chrono::nanoseconds pause) {
    StealMutex lock(tuning);
    Scheduler scheduler;
    release_to_held_waiter(lock, scheduler, pause);
    if (!lock.try_lock()) {
      scheduler.let_run();
      finish();
      FAIL() << "the released lock was not stealable " << pause.count() << " ns after the unlock";
    }
    record("contender");
    scheduler.let_run();
    wait_until([&] { return lock.handoff_requested(); }, "the robbed waiter to request a handoff");
    lock.unlock();
    EXPECT_EQ(finish(), (std::vector<std::string>{"contender", "waiter"}));
  }
  // Lets the waiters go; each one still queued must be woken by its predecessor's unlock.
  std::vector<std::string> finish() {
    release_waiter_.count_down();
    const std::size_t waiters = threads_.size();
    wait_until([&] { return waiters_done_.load() == waiters; }, "every waiter to get the lock");
    threads_.clear();
    LockGuard guard(order_lock_);
    return order_;
  }

  Referee referee_;

 private:
  std::latch release_waiter_{1};
  std::atomic<std::size_t> waiters_done_{0};
  std::vector<std::jthread> threads_;
  Mutex order_lock_;
  std::vector<std::string> order_ CUSED_GUARDED_BY(order_lock_);
};

TEST_F(StealMutexTest, ARunningContenderTakesTheLockBeforeTheWokenWaiter) {
  StealMutex lock({.spin_rounds = 0, .handoff_after = 1});
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
  StealMutex lock({.spin_rounds = 0, .handoff_after = 2});
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
  StealMutex lock({.spin_rounds = 0});
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

// An unlock that releases marks a wake-up pending for the first waiter, and further unlocks
// before that waiter runs only release. The mark belongs to the first waiter: when the lock is
// handed over to it instead, it must take the mark along, or the waiter behind it is never woken.
TEST_F(StealMutexTest, AHandoffTakesAlongAWakeUpPendingForTheNewOwner) {
  Referee referee(/*hold_after_loss=*/true);
  StealMutex lock({.spin_rounds = 0, .handoff_after = 1});
  lock.set_observer(&referee);
  lock.lock();
  start_waiter(lock, "first");
  start_waiter(lock, "second");

  lock.unlock();  // wakes the first waiter
  referee.await_woken();
  if (!lock.try_lock()) FAIL() << "steal 1";
  lock.unlock();  // releases again: a second wake-up for the first waiter is now pending
  if (!lock.try_lock()) FAIL() << "steal 2";
  referee.let_compete();
  referee.await_lost();  // the first waiter lost and requested a handoff
  EXPECT_TRUE(lock.handoff_requested());
  lock.unlock();  // hands over to the first waiter, which has not consumed its pending wake-up
  referee.let_sleep();
  referee.let_compete();  // the second waiter, woken when the first unlocks
  EXPECT_EQ(finish(), (std::vector<std::string>{"first", "second"}));
}

// Issue 33, docs/locking.md "steal-window": inside the window the released lock is stealable as
// under lock_policy=steal, even while the woken waiter has not run yet.
TEST_F(StealMutexTest, WithinTheStealWindowARunningContenderTakesTheLockBeforeTheWokenWaiter) {
  expect_steal_before_pickup({.spin_rounds = 0, .steal_window = std::chrono::seconds(10)},
                             std::chrono::milliseconds(1));
}

// Issue 33, docs/locking.md "steal-window": once the window has passed, the free lock is reserved
// for the woken waiter. try_lock fails and lock() queues behind the waiter, which takes the lock
// without a loss when it runs, and wakes the contender at its unlock.
TEST_F(StealMutexTest, AfterTheStealWindowTheFreeLockIsReservedForTheWokenWaiter) {
  StealMutex lock({.spin_rounds = 0, .steal_window = std::chrono::microseconds(1)});
  Scheduler scheduler;
  release_to_held_waiter(lock, scheduler, std::chrono::milliseconds(1));  // far past the window
  EXPECT_FALSE(try_lock_and_release(lock))
      << "the free lock is the woken waiter's after the window";
  start_waiter(lock, "contender");
  EXPECT_EQ(lock.waiters(), 2u) << "a lock() contender queues behind the woken waiter";

  scheduler.let_run();  // the waiter, which finds the lock free
  scheduler.let_run();  // the contender, woken when the waiter unlocks
  EXPECT_EQ(finish(), (std::vector<std::string>{"waiter", "contender"}));
  EXPECT_FALSE(lock.handoff_requested());
  EXPECT_EQ(lock.waiters(), 0u);
}

// Issue 33: steal_window 0 is lock_policy=steal's rule, stealable for as long as the woken waiter
// takes to run, however long that is.
TEST_F(StealMutexTest, WithoutAStealWindowTheLockIsStealableUntilTheWokenWaiterRuns) {
  expect_steal_before_pickup({.spin_rounds = 0}, std::chrono::milliseconds(1));
}

}  // namespace
}  // namespace cused::sync::testing
