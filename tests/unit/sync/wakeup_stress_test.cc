// SPDX-License-Identifier: GPL-2.0-only
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
  run_threads(kThreads, [&](int thread) {
    std::minstd_rand random(thread + 1);
    for (int i = 0; i < kRounds; ++i) {
      {
        LockGuard guard(counter.lock);
        counter.increment();
        nap(random, 4);
      }
      nap(random, 2);
    }
  });
  EXPECT_EQ(counter.read(), std::uint64_t{kThreads} * kRounds);
}

}  // namespace
}  // namespace cused::sync::testing
