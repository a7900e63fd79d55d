// SPDX-License-Identifier: GPL-2.0-only
// cused run's receivers taking turns at a program's seccomp listener (cused/run/receive_turns.h,
// issue 30): one at a time while one thread of the program was notified, all of them from the
// second thread on, and all of them let go when the receivers stop.
#include "cused/run/receive_turns.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace cused::run {
namespace {

using namespace std::chrono_literals;

// Whether a take() begun now is still waiting after a while (it would have returned by then).
bool take_waits(ReceiveTurns& turns, std::future<bool>& taken) {
  taken = std::async(std::launch::async, [&] { return turns.take(); });
  return taken.wait_for(100ms) == std::future_status::timeout;
}

TEST(ReceiveTurnsTest, OneReceiverAtATimeWhileOneThreadIsNotified) {
  ReceiveTurns turns;
  ASSERT_TRUE(turns.take());
  turns.received_from(100);
  turns.received_from(100);  // the same thread again: still one receiver
  std::future<bool> second;
  EXPECT_TRUE(take_waits(turns, second));
  turns.release_all();
  EXPECT_FALSE(second.get());
}

TEST(ReceiveTurnsTest, EveryReceiverWaitsOnceASecondThreadWasNotified) {
  ReceiveTurns turns;
  ASSERT_TRUE(turns.take());
  turns.received_from(100);
  std::future<bool> waiting;
  ASSERT_TRUE(take_waits(turns, waiting));
  turns.received_from(101);  // a second thread of the program: the waiting receiver goes too
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(waiting.get());
  EXPECT_TRUE(turns.take());  // and any later one at once
  turns.received_from(100);   // for good
  EXPECT_TRUE(turns.take());
}

TEST(ReceiveTurnsTest, ReleaseAllEndsEveryWaitForGood) {
  ReceiveTurns turns;
  ASSERT_TRUE(turns.take());
  std::future<bool> first, second;
  ASSERT_TRUE(take_waits(turns, first));
  ASSERT_TRUE(take_waits(turns, second));
  turns.release_all();
  EXPECT_FALSE(first.get());
  EXPECT_FALSE(second.get());
  EXPECT_FALSE(turns.take());
}

}  // namespace
}  // namespace cused::run
