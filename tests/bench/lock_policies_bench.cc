// SPDX-License-Identifier: GPL-2.0-only
// Lock policies under contention (issue 9, docs/performance.md "Lock policies").
//   BM_Uncontended  one thread: the price of a lock/unlock pair, and of PolicyMutex's dispatch.
//   BM_Contended    1..8 threads hammering one lock around a short critical section (items/s is
//                   the total rate of critical sections), with and without work between them.
//   BM_Fairness     1..8 threads for a fixed time: total rate, and how the acquisitions spread
//                   over the threads.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/sync/cpu_relax.h"
#include "core/sync/handoff_mutex.h"
#include "core/sync/lock_policy.h"
#include "core/sync/mutex.h"
#include "core/sync/policy_mutex.h"
#include "core/sync/spin_then_park_mutex.h"
#include "core/sync/spinlock.h"
#include "core/sync/steal_mutex.h"

namespace cused::sync {
namespace {

template <LockPolicy kPolicy>
class PolicyMutexOf : public PolicyMutex {
 public:
  PolicyMutexOf() : PolicyMutex(kPolicy) {}
};

// The shared state a critical section touches: a few cache lines, like a proc's or node's fields.
struct alignas(64) SharedState {
  std::array<std::uint64_t, 16> words{};
};

// About 50 ns of work on the shared lines (16 dependent read-modify-writes).
void critical_section(SharedState& state) {
  for (std::uint64_t& word : state.words) {
    word += 1;
    benchmark::DoNotOptimize(word);
  }
}

// Work between two critical sections, on the thread's own data.
void think(int pauses) {
  for (int i = 0; i < pauses; ++i) cpu_relax();
}

template <typename Lock>
void BM_Uncontended(benchmark::State& state) {
  Lock lock;
  for (auto _ : state) {
    lock.lock();
    benchmark::ClobberMemory();
    lock.unlock();
  }
  state.SetItemsProcessed(state.iterations());
}

// range(0): pauses of thinking between critical sections (0: back to back, fully contended).
template <typename Lock>
void BM_Contended(benchmark::State& state) {
  static Lock lock;
  static SharedState shared;
  const int think_pauses = static_cast<int>(state.range(0));
  for (auto _ : state) {
    lock.lock();
    critical_section(shared);
    lock.unlock();
    think(think_pauses);
  }
  state.SetItemsProcessed(state.iterations());
}

// One thread's acquisitions, on its own cache line; only that thread writes it.
struct alignas(64) AcquisitionCount {
  std::atomic<std::uint64_t> value{0};
  void add_one() {
    value.store(value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};

std::vector<std::uint64_t> snapshot(const std::vector<AcquisitionCount>& counts) {
  std::vector<std::uint64_t> values;
  for (const AcquisitionCount& count : counts)
    values.push_back(count.value.load(std::memory_order_relaxed));
  return values;
}

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// range(0) threads take the lock in a loop, range(1) pauses of thinking between critical
// sections, each counting its own acquisitions; the counts are sampled over a fixed window after a
// warm-up (threads start milliseconds apart on a loaded machine, and the first ones would pile up
// uncontended acquisitions meanwhile). Unlike BM_Contended, where every thread must finish the
// same number of iterations, an unfair lock cannot hide here: acq_per_s is the total rate,
// max/min and min_share (the least served thread's share, 1/threads when fair) show the spread.
// acq_per_cpu_s divides by the CPU time the process used in the window instead of wall time: on
// a machine shared with other work the CPU share we get varies from run to run, and this rate
// (the lock's efficiency: spinning burns CPU, sleeping does not) varies much less.
template <typename Lock>
void BM_Fairness(benchmark::State& state) {
  constexpr auto kWarmUp = std::chrono::milliseconds(50);
  constexpr auto kWindow = std::chrono::milliseconds(300);
  const auto threads = static_cast<std::size_t>(state.range(0));
  const int think_pauses = static_cast<int>(state.range(1));
  for (auto _ : state) {
    Lock lock;
    SharedState shared;
    std::atomic<bool> stop{false};
    std::vector<AcquisitionCount> counts(threads);
    std::vector<std::uint64_t> first;
    std::vector<std::uint64_t> last;
    double cpu_seconds = 0;
    {
      std::vector<std::jthread> running;
      for (std::size_t t = 0; t < threads; ++t) {
        running.emplace_back([&, t] {
          while (!stop.load(std::memory_order_relaxed)) {
            lock.lock();
            critical_section(shared);
            lock.unlock();
            think(think_pauses);
            counts[t].add_one();
          }
        });
      }
      std::this_thread::sleep_for(kWarmUp);
      first = snapshot(counts);
      const double cpu_before = process_cpu_seconds();
      std::this_thread::sleep_for(kWindow);
      last = snapshot(counts);
      cpu_seconds = process_cpu_seconds() - cpu_before;
      stop = true;
    }
    std::uint64_t total = 0;
    std::uint64_t min = UINT64_MAX;
    std::uint64_t max = 0;
    for (std::size_t t = 0; t < threads; ++t) {
      const std::uint64_t in_window = last[t] - first[t];
      total += in_window;
      min = std::min(min, in_window);
      max = std::max(max, in_window);
    }
    const auto ratio = [](std::uint64_t a, std::uint64_t b) {
      return static_cast<double>(a) / static_cast<double>(std::max<std::uint64_t>(b, 1));
    };
    state.counters["acq_per_s"] =
        static_cast<double>(total) / std::chrono::duration<double>(kWindow).count();
    state.counters["acq_per_cpu_s"] = static_cast<double>(total) / cpu_seconds;
    state.counters["max/min"] = ratio(max, min);
    state.counters["min_share"] = ratio(min, total);
  }
}

using Barging = PolicyMutexOf<LockPolicy::kBarging>;
using SpinThenPark = PolicyMutexOf<LockPolicy::kSpinThenPark>;
using Handoff = PolicyMutexOf<LockPolicy::kHandoff>;
using Steal = PolicyMutexOf<LockPolicy::kSteal>;
using StealWindow = PolicyMutexOf<LockPolicy::kStealWindow>;

// Not lock_policy= values (yet): the steal rule without its starvation bound, without its
// optimistic spin, and waking on every unlock as the kernel does, to measure what each is worth.
class StealNeverHandOff : public StealMutex {
 public:
  StealNeverHandOff() : StealMutex({.handoff_after = UINT_MAX}) {}
};
class StealNoSpin : public StealMutex {
 public:
  StealNoSpin() : StealMutex({.spin_rounds = 0}) {}
};
class StealEveryUnlockWakes : public StealMutex {
 public:
  StealEveryUnlockWakes() : StealMutex({.coalesce_wakeups = false}) {}
};

// Dispatch cost: each policy's class called directly, then through PolicyMutex.
// BM_Fairness comes first: Google Benchmark's CSV output takes its columns from the first
// benchmark that runs and aborts on a counter that a later one adds; the families without
// counters leave those columns empty.
#define CUSED_FAIRNESS(Lock)                \
  BENCHMARK_TEMPLATE(BM_Fairness, Lock)     \
      ->ArgsProduct({{1, 2, 4, 8}, {0, 3}}) \
      ->ArgNames({"threads", "think"})      \
      ->Iterations(1)                       \
      ->UseRealTime()
CUSED_FAIRNESS(std::mutex);
CUSED_FAIRNESS(SpinLock);
CUSED_FAIRNESS(Barging);
CUSED_FAIRNESS(SpinThenPark);
CUSED_FAIRNESS(Handoff);
CUSED_FAIRNESS(Steal);
CUSED_FAIRNESS(StealWindow);
CUSED_FAIRNESS(StealNeverHandOff);
CUSED_FAIRNESS(StealNoSpin);
CUSED_FAIRNESS(StealEveryUnlockWakes);

BENCHMARK_TEMPLATE(BM_Uncontended, std::mutex);
BENCHMARK_TEMPLATE(BM_Uncontended, SpinLock);
BENCHMARK_TEMPLATE(BM_Uncontended, Mutex);
BENCHMARK_TEMPLATE(BM_Uncontended, SpinThenParkMutex);
BENCHMARK_TEMPLATE(BM_Uncontended, HandoffMutex);
BENCHMARK_TEMPLATE(BM_Uncontended, StealMutex);
BENCHMARK_TEMPLATE(BM_Uncontended, Barging);
BENCHMARK_TEMPLATE(BM_Uncontended, SpinThenPark);
BENCHMARK_TEMPLATE(BM_Uncontended, Handoff);
BENCHMARK_TEMPLATE(BM_Uncontended, Steal);
BENCHMARK_TEMPLATE(BM_Uncontended, StealWindow);

#define CUSED_CONTENDED(Lock) \
  BENCHMARK_TEMPLATE(BM_Contended, Lock)->Arg(0)->Arg(3)->ThreadRange(1, 8)->UseRealTime()
CUSED_CONTENDED(std::mutex);
CUSED_CONTENDED(SpinLock);
CUSED_CONTENDED(Barging);
CUSED_CONTENDED(SpinThenPark);
CUSED_CONTENDED(Handoff);
CUSED_CONTENDED(Steal);
CUSED_CONTENDED(StealWindow);

}  // namespace
}  // namespace cused::sync

BENCHMARK_MAIN();
