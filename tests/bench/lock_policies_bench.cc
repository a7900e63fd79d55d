// Lock policies under contention (issue 9, docs/performance.md "Lock policies").
//   BM_Uncontended  one thread: the price of a lock/unlock pair, and of PolicyMutex's dispatch.
//   BM_Contended    1..8 threads hammering one lock around a short critical section (items/s is
//                   the total rate of critical sections), with and without work between them.
//   BM_Fairness     4 threads for a fixed time: how the acquisitions spread over the threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
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

// Each thread counts its own acquisitions for a fixed time; the counters show the spread.
template <typename Lock>
void BM_Fairness(benchmark::State& state) {
  constexpr int kThreads = 4;
  constexpr auto kRunFor = std::chrono::milliseconds(300);
  for (auto _ : state) {
    Lock lock;
    SharedState shared;
    std::atomic<bool> stop{false};
    std::array<std::uint64_t, kThreads> acquisitions{};
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
          std::uint64_t mine = 0;
          while (!stop.load(std::memory_order_relaxed)) {
            lock.lock();
            critical_section(shared);
            lock.unlock();
            ++mine;
          }
          acquisitions[t] = mine;
        });
      }
      std::this_thread::sleep_for(kRunFor);
      stop = true;
    }
    const auto [min, max] = std::minmax_element(acquisitions.begin(), acquisitions.end());
    std::uint64_t total = 0;
    for (std::uint64_t count : acquisitions) total += count;
    state.counters["acq_per_s"] =
        static_cast<double>(total) / std::chrono::duration<double>(kRunFor).count();
    state.counters["min_per_thread"] = static_cast<double>(*min);
    state.counters["max_per_thread"] = static_cast<double>(*max);
    state.counters["max/min"] =
        static_cast<double>(*max) / static_cast<double>(std::max<std::uint64_t>(*min, 1));
  }
}

using Barging = PolicyMutexOf<LockPolicy::kBarging>;
using SpinThenPark = PolicyMutexOf<LockPolicy::kSpinThenPark>;
using Handoff = PolicyMutexOf<LockPolicy::kHandoff>;
using Steal = PolicyMutexOf<LockPolicy::kSteal>;

// Dispatch cost: each policy's class called directly, then through PolicyMutex.
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

#define CUSED_CONTENDED(Lock) \
  BENCHMARK_TEMPLATE(BM_Contended, Lock)->Arg(0)->Arg(20)->ThreadRange(1, 8)->UseRealTime()
CUSED_CONTENDED(std::mutex);
CUSED_CONTENDED(SpinLock);
CUSED_CONTENDED(Barging);
CUSED_CONTENDED(SpinThenPark);
CUSED_CONTENDED(Handoff);
CUSED_CONTENDED(Steal);

#define CUSED_FAIRNESS(Lock) BENCHMARK_TEMPLATE(BM_Fairness, Lock)->Iterations(1)->UseRealTime()
CUSED_FAIRNESS(std::mutex);
CUSED_FAIRNESS(SpinLock);
CUSED_FAIRNESS(Barging);
CUSED_FAIRNESS(SpinThenPark);
CUSED_FAIRNESS(Handoff);
CUSED_FAIRNESS(Steal);

}  // namespace
}  // namespace cused::sync

BENCHMARK_MAIN();
