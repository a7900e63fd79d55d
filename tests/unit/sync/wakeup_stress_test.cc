// No lost wake-ups, for every lock policy (issue 9): many threads, random short sleeps inside and
// outside the critical section (so that waiters really park on their futex and are woken, handed
// the lock, or robbed of it), and every thread must finish in bounded time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>

#include "core/sync/lock_guard.h"
#include "tests/unit/sync/lock_types.h"
#include "tests/unit/sync/sync_test_util.h"

namespace cused::sync::testing {
namespace {

constexpr int kThreads = 16;
constexpr int kRounds = 150;

template <typename Lock>
class NoLostWakeups : public ::testing::Test {};
TYPED_TEST_SUITE(NoLostWakeups, AllLocks, LockNames);

void nap(std::minstd_rand& random, int one_in) {
  if (random() % one_in == 0) std::this_thread::sleep_for(std::chrono::microseconds(random() % 50));
}

TYPED_TEST(NoLostWakeups, ManyThreadsWithRandomSleepsAllFinish) {
  GuardedCounter<TypeParam> counter;
  std::atomic<int> finished{0};
  std::vector<std::jthread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::minstd_rand random(t + 1);
      for (int i = 0; i < kRounds; ++i) {
        {
          LockGuard guard(counter.lock);
          counter.increment();
          nap(random, 4);
        }
        nap(random, 2);
      }
      finished.fetch_add(1);
    });
  }
  wait_until([&] { return finished.load() == kThreads; }, "every thread to finish its rounds");
  threads.clear();
  EXPECT_EQ(counter.read(), std::uint64_t{kThreads} * kRounds);
}

}  // namespace
}  // namespace cused::sync::testing
