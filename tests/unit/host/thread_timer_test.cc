// SPDX-License-Identifier: GPL-2.0-only
// The daemon's timer (cused/host/thread_timer.h): deadlines on its own thread, in deadline order,
// never inside the call that set them; sleep() pays the simulated cost for real.
#include "cused/host/thread_timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace cused::host {
namespace {

using std::chrono::milliseconds;

TEST(ThreadTimer, RunsCallbacksInDeadlineOrderOnItsThread) {
  ThreadTimer timer;
  std::mutex lock;
  std::vector<int> order;
  std::promise<std::thread::id> last;
  // 300 ms against 20 ms: only a stall of 280 ms between the two calls (TSan on a loaded machine
  // included) could put the later deadline first.
  timer.after(milliseconds(300), [&] {
    std::lock_guard guard(lock);
    order.push_back(300);
    last.set_value(std::this_thread::get_id());
  });
  timer.after(milliseconds(20), [&] {
    std::lock_guard guard(lock);
    order.push_back(20);
  });
  timer.soon([&] {
    std::lock_guard guard(lock);
    order.push_back(0);
  });
  EXPECT_NE(last.get_future().get(), std::this_thread::get_id());
  std::lock_guard guard(lock);
  EXPECT_EQ(order, (std::vector<int>{0, 20, 300}));
}

// A deadline set while the thread sleeps toward a later one wakes it (the eventfd).
TEST(ThreadTimer, AnEarlierDeadlineWakesTheThread) {
  ThreadTimer timer;
  timer.after(milliseconds(60'000), [] {});
  const auto start = ThreadTimer::Clock::now();
  std::promise<void> fired;
  timer.after(milliseconds(10), [&] { fired.set_value(); });
  fired.get_future().wait();
  const auto took = ThreadTimer::Clock::now() - start;
  EXPECT_GE(took, milliseconds(10));
  EXPECT_LT(took, milliseconds(30'000));
}

// Stopping drops what is not yet due: the callback (and what it holds) goes without running.
TEST(ThreadTimer, DestructionDropsCallbacksNotYetDue) {
  auto held = std::make_shared<int>(0);
  bool ran = false;
  {
    ThreadTimer timer;
    timer.after(milliseconds(60'000), [&ran, held] { ran = true; });
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(held.use_count(), 1);
}

TEST(ThreadTimer, SleepBlocksTheCaller) {
  ThreadTimer timer;
  const auto start = ThreadTimer::Clock::now();
  timer.sleep(std::chrono::microseconds(5'000));
  EXPECT_GE(ThreadTimer::Clock::now() - start, milliseconds(5));
}

}  // namespace
}  // namespace cused::host
