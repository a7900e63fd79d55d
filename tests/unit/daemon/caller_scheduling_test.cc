// SPDX-License-Identifier: GPL-2.0-only
// A daemon thread serving a request runs at its caller's scheduling attributes while it serves it
// (cused/request/caller_scheduling.h; issue 18's execution context), and at its own afterwards.
// The caller here is another thread of this process with other attributes.
#include "cused/request/caller_scheduling.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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

// Issue 47 point 1: what "unpreemptible" means for a spinlock section, tried against the
// scheduler itself. A busy thread of higher CFS weight (nice 0 against the caller's 19), pinned
// to the holder's CPU, gets that CPU as soon as the holder's slice ends; it makes no progress while
// a daemon thread serving a nice-19 caller holds the spin designs' allocator lock, and the holder
// counts no involuntary context switch in its section. The mutex design's holder, preemptible as
// the kernel's is, is preempted by the same thread in the same section (which shows the
// competitor competes).
std::uint64_t involuntary_switches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<std::uint64_t>(usage.ru_nivcsw);
}

int first_allowed_cpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) return cpu;
  return 0;
}

bool pin_to(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0;
}

// A thread at `nice` that counts as fast as it can on `cpu` until it is destroyed.
class Competitor {
 public:
  Competitor(int cpu, int nice)
      : thread_([this, cpu, nice] {
          pinned_ = pin_to(cpu);
          setpriority(PRIO_PROCESS, static_cast<id_t>(my_tid()), nice);
          while (!done_.load(std::memory_order_relaxed))
            progress_.fetch_add(1, std::memory_order_relaxed);
        }) {
    while (progress() == 0) std::this_thread::yield();
  }
  ~Competitor() {
    done_.store(true);
    thread_.join();
  }
  std::uint64_t progress() const { return progress_.load(std::memory_order_relaxed); }
  bool pinned() const { return pinned_; }

 private:
  std::atomic<std::uint64_t> progress_{0};
  std::atomic<bool> done_{false};
  std::atomic<bool> pinned_{false};
  std::thread thread_;
};

struct SectionSeen {
  std::uint64_t competitor_progress = 0;
  std::uint64_t switches = 0;
};

// Holds `lock` busy for `length` and says what happened meanwhile, read before the release.
template <typename Lock>
SectionSeen busy_section(Lock& lock, const Competitor& competitor,
                         std::chrono::milliseconds length) {
  lock.lock();
  const std::uint64_t progress = competitor.progress();
  const std::uint64_t switches = involuntary_switches();
  const auto end = std::chrono::steady_clock::now() + length;
  while (std::chrono::steady_clock::now() < end) {
  }
  const SectionSeen seen{competitor.progress() - progress, involuntary_switches() - switches};
  lock.unlock();
  return seen;
}

TEST(CallerScheduling, ASpinlockHolderIsNotPreemptedByAHeavierThreadOnItsCpu) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root";
  const int cpu = first_allowed_cpu();
  std::thread daemon_thread([cpu] {
    ASSERT_TRUE(pin_to(cpu));
    ASSERT_TRUE(apply_scheduling({SCHED_OTHER, 0, 0}));
    const SchedulingAttributes low{SCHED_OTHER, 19, 0};
    Caller caller(low);
    ASSERT_TRUE(caller.applied());
    Competitor competitor(cpu, 0);
    ASSERT_TRUE(competitor.pinned());
    core::alloc::AllocSpinLock spin(sync::LockPolicy::kBarging, core::kSleepingLockDesign);
    core::alloc::SleepingAllocLock mutex(sync::LockPolicy::kBarging, core::kSleepingLockDesign);
    CallerScheduling scope(caller.tid(), true);
    ASSERT_EQ(mine(), low);
    // 30 ms: ten and more of the scheduler's slices, well inside the real-time throttle's 950 ms.
    constexpr std::chrono::milliseconds kSection{30};
    const SectionSeen spin_seen = busy_section(spin, competitor, kSection);
    EXPECT_EQ(spin_seen.competitor_progress, 0u);
    EXPECT_EQ(spin_seen.switches, 0u);
    EXPECT_EQ(mine(), low) << "the caller's attributes back after the section";
    const SectionSeen mutex_seen = busy_section(mutex, competitor, kSection);
    EXPECT_GT(mutex_seen.competitor_progress, 0u);
    EXPECT_GT(mutex_seen.switches, 0u);
  });
  daemon_thread.join();
}

// The section is one per thread however many spinlocks it holds: it ends at the outermost release
// (the kernel's preempt count), a try_lock that fails opens none, and the scope gives the daemon
// thread its own attributes back after all (the caller's after each section).
TEST(CallerScheduling, NestedSpinSectionsEndAtTheOutermostRelease) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root";
  std::thread daemon_thread([] {
    ASSERT_TRUE(apply_scheduling({SCHED_OTHER, 0, 0}));
    const SchedulingAttributes own = mine();
    const SchedulingAttributes low{SCHED_OTHER, 19, 0};
    const SchedulingAttributes unpreemptible{SCHED_FIFO, 0, 1};
    Caller caller(low);
    ASSERT_TRUE(caller.applied());
    core::alloc::AllocSpinLock outer(sync::LockPolicy::kBarging, core::kSleepingLockDesign);
    core::alloc::AllocSpinLock inner(sync::LockPolicy::kBarging, core::kSleepingLockDesign);
    {
      CallerScheduling scope(caller.tid(), true);
      outer.lock();
      EXPECT_EQ(mine(), unpreemptible);
      inner.lock();
      EXPECT_EQ(mine(), unpreemptible);
      inner.unlock();
      EXPECT_EQ(mine(), unpreemptible) << "the outer section is still open";
      if (inner.try_lock()) {
        EXPECT_EQ(mine(), unpreemptible);
        inner.unlock();
      } else {
        ADD_FAILURE() << "try_lock of a free spinlock failed";
      }
      EXPECT_EQ(mine(), unpreemptible) << "a nested try's release leaves the outer section open";
      outer.unlock();
      EXPECT_EQ(mine(), low);
      // A try that fails (another thread, with no control, holds the lock) opens no section.
      std::atomic<bool> held{false}, release{false};
      std::thread other([&] {
        outer.lock();
        held.store(true);
        while (!release.load()) std::this_thread::yield();
        outer.unlock();
      });
      while (!held.load()) std::this_thread::yield();
      if (outer.try_lock()) {
        ADD_FAILURE() << "try_lock of a held spinlock succeeded";
        outer.unlock();
      }
      EXPECT_EQ(mine(), low);
      release.store(true);
      other.join();
    }
    EXPECT_EQ(mine(), own);
  });
  daemon_thread.join();
}

// As in the kernel the lock never has a preemptible holder: the section begins before the lock is
// taken. Unlike the kernel's, a waiter spins at its caller's attributes (a waiter spinning
// unpreemptible could keep a preempted holder of the daemon's own priority off its CPU) and
// opens the section again only to try the lock; a try that fails closes it.
TEST(CallerScheduling, AWaiterSpinsAtItsCallersAttributesAndHoldsUnpreemptible) {
  if (geteuid() != 0) GTEST_SKIP() << "SCHED_FIFO needs root";
  core::alloc::AllocSpinLock spin(sync::LockPolicy::kBarging, core::kSleepingLockDesign);
  const SchedulingAttributes low{SCHED_OTHER, 19, 0};
  spin.lock();  // this thread has no control: nothing changes for it
  std::atomic<pid_t> waiter{0};
  SchedulingAttributes in_section, after;
  std::thread daemon_thread([&] {
    ASSERT_TRUE(apply_scheduling({SCHED_OTHER, 0, 0}));
    Caller caller(low);
    ASSERT_TRUE(caller.applied());
    CallerScheduling scope(caller.tid(), true);
    waiter.store(my_tid());
    spin.lock();
    in_section = mine();
    spin.unlock();
    after = mine();
  });
  while (waiter.load() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  SchedulingAttributes waiting;
  EXPECT_TRUE(read_scheduling(waiter.load(), waiting));
  EXPECT_EQ(waiting, low) << "the waiter spins at its caller's attributes";
  spin.unlock();
  daemon_thread.join();
  EXPECT_EQ(in_section, (SchedulingAttributes{SCHED_FIFO, 0, 1}));
  EXPECT_EQ(after, low);
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
