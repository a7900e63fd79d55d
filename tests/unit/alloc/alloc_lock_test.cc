// SPDX-License-Identifier: GPL-2.0-only
// The spin designs' allocator lock and the kernel's preempt_disable() (core/alloc/alloc_lock.h,
// core/sync/preemption.h; issue 47 point 1): the section a holder cannot be preempted in begins
// before the lock is taken and ends after it is released, as spin_lock()'s does, so the lock never
// has a holder that can be preempted; unlike the kernel's, a waiter spins outside the section and
// enters it only to try the lock. The host's control (cused/request/caller_scheduling.cc) makes
// the section SCHED_FIFO; tests/unit/daemon/caller_scheduling_test.cc tries that against the
// scheduler. Here a stand-in control asks another thread, at each call, whether it could take the
// lock at that moment.
#include "core/alloc/alloc_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <thread>
#include <utility>
#include <vector>

namespace cused::core::alloc {
namespace {

// Whether a thread with no control could take `lock` now.
bool free_now(AllocSpinLock& lock) {
  return std::async(std::launch::async,
                    [&lock] {
                      if (!lock.try_lock()) return false;
                      lock.unlock();
                      return true;
                    })
      .get();
}

enum class Call { disable, enable };
using Calls = std::vector<std::pair<Call, bool>>;  // the call, and whether the lock was free

class ProbingControl final : public sync::PreemptionControl {
 public:
  explicit ProbingControl(AllocSpinLock& lock) : lock_(lock) {
    sync::thread_preemption_control() = this;
  }
  ~ProbingControl() { sync::thread_preemption_control() = nullptr; }
  void disable() override { calls_.emplace_back(Call::disable, free_now(lock_)); }
  void enable() override { calls_.emplace_back(Call::enable, free_now(lock_)); }
  const Calls& calls() const { return calls_; }

 private:
  AllocSpinLock& lock_;
  Calls calls_;
};

// A spin design's lock (its trace id is not the mutex's).
constexpr std::uint8_t kSpinDesign = kSleepingLockDesign + 1;

TEST(AllocSpinLock, TheSectionBeginsBeforeTheLockIsTakenAndEndsAfterItIsReleased) {
  AllocSpinLock lock(sync::LockPolicy::kBarging, kSpinDesign);
  ProbingControl control(lock);
  lock.lock();
  EXPECT_FALSE(free_now(lock));
  lock.unlock();
  EXPECT_EQ(control.calls(), (Calls{{Call::disable, true}, {Call::enable, true}}));
}

TEST(AllocSpinLock, ATryLockOpensTheSectionFirstAndAFailedOneClosesIt) {
  AllocSpinLock lock(sync::LockPolicy::kBarging, kSpinDesign);
  {
    ProbingControl control(lock);
    if (lock.try_lock()) {
      lock.unlock();
    } else {
      ADD_FAILURE() << "try_lock of a free spinlock failed";
    }
    EXPECT_EQ(control.calls(), (Calls{{Call::disable, true}, {Call::enable, true}}));
  }
  lock.lock();  // this thread, with no control now
  std::thread([&lock] {
    ProbingControl control(lock);
    if (lock.try_lock()) {
      ADD_FAILURE() << "try_lock of a held spinlock succeeded";
      lock.unlock();
    }
    EXPECT_EQ(control.calls(), (Calls{{Call::disable, false}, {Call::enable, false}}));
  }).join();
  lock.unlock();
}

// A waiter leaves the section while the lock is held (it spins at its own priority) and enters it
// again to take the lock once it is free.
TEST(AllocSpinLock, AWaiterSpinsOutsideTheSection) {
  AllocSpinLock lock(sync::LockPolicy::kBarging, kSpinDesign);
  lock.lock();  // no control on this thread
  std::atomic<bool> waiting{false};
  Calls calls;
  std::thread waiter([&] {
    ProbingControl control(lock);
    waiting.store(true);
    lock.lock();
    lock.unlock();
    calls = control.calls();
  });
  while (!waiting.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  lock.unlock();
  waiter.join();
  EXPECT_EQ(calls, (Calls{{Call::disable, false},
                          {Call::enable, false},
                          {Call::disable, true},
                          {Call::enable, true}}));
}

}  // namespace
}  // namespace cused::core::alloc
