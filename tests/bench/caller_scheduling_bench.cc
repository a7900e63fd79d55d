// SPDX-License-Identifier: GPL-2.0-only
// What serving a request at its caller's scheduling costs (cused/request/caller_scheduling.h,
// exec_context=caller): a scope for a caller with the daemon thread's own attributes (the common
// case: a cache lookup, one sched_getattr every kStaleAfter), for a caller at another nice (two
// sched_setattr per request), and the sched_getattr a cache miss pays; an allocator-lock section
// under such a scope; and S4.12's nice reads and sets.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "core/alloc/alloc_lock.h"
#include "core/sync/preemption.h"
#include "cused/request/caller_scheduling.h"
#include "cused/thread_priorities.h"

namespace {

// A caller thread at `nice` that lives for the benchmark.
class Caller {
 public:
  explicit Caller(int nice)
      : thread_([this, nice] {
          setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
          tid_.store(static_cast<pid_t>(syscall(SYS_gettid)));
          while (!done_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }) {
    while (tid_.load() == 0) std::this_thread::yield();
  }
  ~Caller() {
    done_.store(true);
    thread_.join();
  }
  pid_t tid() const { return tid_.load(); }

 private:
  std::atomic<pid_t> tid_{0};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// One request's scope for a caller at `nice`, with exec_context=caller (`enabled`) or daemon.
void BM_Scope(benchmark::State& state, int nice, bool enabled) {
  Caller caller(nice);
  for (auto _ : state) {
    cused::CallerScheduling scope(caller.tid(), enabled);
    benchmark::DoNotOptimize(&scope);
  }
}
BENCHMARK_CAPTURE(BM_Scope, CallerAtDaemonAttributes, 0, true);
BENCHMARK_CAPTURE(BM_Scope, CallerAtNice10, 10, true);
BENCHMARK_CAPTURE(BM_Scope, Disabled, 10, false);

// One allocator-lock section of a daemon thread serving a caller at `nice` (exec_context=caller):
// the spin designs' lock, held unpreemptible when the caller is less urgent than the daemon (two
// sched_setattr, core/sync/preemption.h), and the mutex design's lock, held as it is.
// `unpreemptible` false takes the thread's preemption control away, leaving the section as
// preemptible as the mutex's: the mechanism's cost per acquisition is the difference (issue 47).
template <typename Lock>
void lock_sections(benchmark::State& state, int nice, bool unpreemptible = true) {
  Caller caller(nice);
  Lock lock(cused::sync::LockPolicy::kBarging, cused::core::kSleepingLockDesign);
  cused::CallerScheduling scope(caller.tid(), true);
  if (!unpreemptible) cused::sync::thread_preemption_control() = nullptr;
  for (auto _ : state) {
    lock.lock();
    lock.unlock();
  }
}
void BM_AllocLockSection(benchmark::State& state, int nice, bool spin) {
  if (spin)
    lock_sections<cused::core::alloc::AllocSpinLock>(state, nice);
  else
    lock_sections<cused::core::alloc::SleepingAllocLock>(state, nice);
}
BENCHMARK_CAPTURE(BM_AllocLockSection, SpinCallerAtNice19, 19, true);
void BM_AllocLockSectionPreemptible(benchmark::State& state, int nice) {
  lock_sections<cused::core::alloc::AllocSpinLock>(state, nice, false);
}
BENCHMARK_CAPTURE(BM_AllocLockSectionPreemptible, SpinCallerAtNice19, 19);
BENCHMARK_CAPTURE(BM_AllocLockSection, SpinCallerAtDaemonAttributes, 0, true);
BENCHMARK_CAPTURE(BM_AllocLockSection, MutexCallerAtNice19, 19, false);

void BM_ReadSchedulingOfAnotherThread(benchmark::State& state) {
  Caller caller(10);
  cused::SchedulingAttributes attributes;
  for (auto _ : state) benchmark::DoNotOptimize(cused::read_scheduling(caller.tid(), attributes));
}
BENCHMARK(BM_ReadSchedulingOfAnotherThread);

// S4.12's host calls (cused/thread_priorities.h): a delivered sync call costs the sender's and the
// receiver's nice read and up to three sets (wait, delivery, reply).
void BM_ThreadPrioritiesNice(benchmark::State& state) {
  Caller caller(10);
  cused::HostThreadPriorities host;
  for (auto _ : state) benchmark::DoNotOptimize(host.nice(caller.tid()));
}
BENCHMARK(BM_ThreadPrioritiesNice);

void BM_ThreadPrioritiesSetNiceUnchanged(benchmark::State& state) {
  Caller caller(10);
  cused::HostThreadPriorities host;
  for (auto _ : state) host.set_nice(caller.tid(), 10);
}
BENCHMARK(BM_ThreadPrioritiesSetNiceUnchanged);

}  // namespace

BENCHMARK_MAIN();
