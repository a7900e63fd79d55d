// SPDX-License-Identifier: GPL-2.0-only
// A daemon thread serving a request runs at its caller's scheduling attributes while it serves it
// (cused/request/caller_scheduling.h; issue 18's execution context), and at its own afterwards.
// The caller here is another thread of this process with other attributes.
#include "cused/request/caller_scheduling.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/alloc/alloc_lock.h"

namespace cused {
namespace {

pid_t my_tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

SchedulingAttributes mine() {
  SchedulingAttributes attributes;
  EXPECT_TRUE(read_scheduling(0, attributes));
  return attributes;
}

// A thread that sets its own attributes and waits until told to end: the "caller".
class Caller {
 public:
  explicit Caller(SchedulingAttributes attributes)
      : thread_([this, attributes] {
          bool applied = apply_scheduling(attributes);
          {
            std::lock_guard lock(mutex_);
            tid_ = my_tid();
            applied_ = applied;
          }
          changed_.notify_all();
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [this] { return done_; });
        }) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return tid_ != 0; });
  }
  ~Caller() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  pid_t tid() const { return tid_; }
  bool applied() const { return applied_; }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  pid_t tid_ = 0;
  bool applied_ = false;
  bool done_ = false;
  std::thread thread_;
};

TEST(CallerScheduling, ServesAtTheCallersNiceAndReturnsToItsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "a daemon thread becomes more urgent again only as root";
  const SchedulingAttributes own = mine();
  Caller caller({SCHED_OTHER, 12, 0});
  ASSERT_TRUE(caller.applied());
  const auto before = CallerScheduling::changes();
  {
    CallerScheduling scope(caller.tid(), true);
    EXPECT_EQ(mine(), (SchedulingAttributes{SCHED_OTHER, 12, 0}));
  }
  EXPECT_EQ(mine(), own);
  EXPECT_EQ(CallerScheduling::changes(), before + 1);
}

TEST(CallerScheduling, TakesARealTimeCallersPolicyAndPriority) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root";
  const SchedulingAttributes own = mine();
  Caller caller({SCHED_FIFO, 0, 3});
  ASSERT_TRUE(caller.applied());
  {
    CallerScheduling scope(caller.tid(), true);
    EXPECT_EQ(mine(), (SchedulingAttributes{SCHED_FIFO, 0, 3}));
  }
  EXPECT_EQ(mine(), own);
}

TEST(CallerScheduling, DisabledOrSameAttributesChangeNothing) {
  const auto before = CallerScheduling::changes();
  const SchedulingAttributes own = mine();
  Caller other({SCHED_OTHER, 15, 0});
  {
    CallerScheduling scope(other.tid(), false);  // exec_context=daemon
    EXPECT_EQ(mine(), own);
  }
  Caller same(mine());
  { CallerScheduling scope(same.tid(), true); }
  EXPECT_EQ(CallerScheduling::changes(), before);
}

// The alloc-lock patch's mechanism: a kernel spinlock's holder runs with preemption disabled, a
// mutex's holder can be preempted (core/sync/preemption.h). A daemon thread serving a nice-19
// caller holds the spin designs' allocator lock unpreemptible (SCHED_FIFO) and goes back to the
// caller's nice at the unlock; it holds the mutex design's lock at the caller's nice.
TEST(CallerScheduling, HoldsTheAllocatorSpinlockUnpreemptibleAndItsMutexAtTheCallersNice) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root";
  // A daemon thread of its own at nice 0 (CallerScheduling reads a thread's own attributes at its
  // first request), so that the nice-19 caller is less urgent than it also when the test runs
  // under `nice`: a caller as urgent as the daemon gets no unpreemptible section.
  std::thread daemon_thread([] {
    ASSERT_TRUE(apply_scheduling({SCHED_OTHER, 0, 0}));
    const SchedulingAttributes own = mine();
    const SchedulingAttributes low{SCHED_OTHER, 19, 0};
    Caller caller(low);
    ASSERT_TRUE(caller.applied());
    core::alloc::AllocSpinLock spin(sync::LockPolicy::kBarging, core::kSleepingLockDesign);
    core::alloc::SleepingAllocLock mutex(sync::LockPolicy::kBarging, core::kSleepingLockDesign);
    const auto before = CallerScheduling::unpreemptible_sections();
    {
      CallerScheduling scope(caller.tid(), true);
      spin.lock();
      EXPECT_EQ(mine(), (SchedulingAttributes{SCHED_FIFO, 0, 1}));
      spin.unlock();
      EXPECT_EQ(mine(), low);
      if (spin.try_lock()) {
        EXPECT_EQ(mine().policy, static_cast<std::uint32_t>(SCHED_FIFO));
        spin.unlock();
      } else {
        ADD_FAILURE() << "try_lock of a free spinlock failed";
      }
      mutex.lock();
      EXPECT_EQ(mine(), low);
      mutex.unlock();
    }
    EXPECT_EQ(mine(), own);
    EXPECT_EQ(CallerScheduling::unpreemptible_sections(), before + 2);
    spin.lock();  // at the daemon's own attributes nothing changes
    EXPECT_EQ(mine(), own);
    spin.unlock();
  });
  daemon_thread.join();
}

// A caller as urgent as the daemon or more (real-time, or a lower nice) is not preempted by the
// daemon's ordinary work: its sections stay at its attributes and pay no system call.
TEST(CallerScheduling, AnUrgentCallersSpinlockSectionKeepsItsAttributes) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO and a lower nice need root";
  const SchedulingAttributes own = mine();
  for (SchedulingAttributes urgent :
       {SchedulingAttributes{SCHED_RR, 0, 2}, SchedulingAttributes{SCHED_OTHER, own.nice - 5, 0}}) {
    Caller caller(urgent);
    ASSERT_TRUE(caller.applied());
    core::alloc::AllocSpinLock spin(sync::LockPolicy::kBarging, core::kSleepingLockDesign);
    const auto before = CallerScheduling::unpreemptible_sections();
    CallerScheduling scope(caller.tid(), true);
    spin.lock();
    EXPECT_EQ(mine(), urgent);
    spin.unlock();
    EXPECT_EQ(mine(), urgent);
    EXPECT_EQ(CallerScheduling::unpreemptible_sections(), before);
  }
}

TEST(CallerScheduling, GoneCallerLeavesTheThreadAsItIs) {
  const SchedulingAttributes own = mine();
  pid_t gone = 0;
  std::thread([&] { gone = my_tid(); }).join();
  {
    CallerScheduling scope(gone, true);
    EXPECT_EQ(mine(), own);
  }
}

}  // namespace
}  // namespace cused
