// SPDX-License-Identifier: GPL-2.0-only
// The shrinker's policy (core/alloc/shrinker.h, docs/design.md section 4), its passes run by the
// test: what a pass reclaims and spares, how requests and stress mode reach the loop, and the
// stats. The thread that runs it in the daemon is tests/unit/host's.
#include "core/alloc/shrinker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "tests/unit/alloc/fixture.h"

namespace cused::core::alloc::testing {
namespace {

class ShrinkerTest : public ::testing::Test {
 protected:
  std::size_t page() const { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
  // Puts `pages` pages of `proc` on the LRU.
  void park_pages(TestProc& proc, std::size_t pages) {
    proc.alloc->free_buffer(*proc.sync_buffer(pages * page()));
  }
  // What the loop does with a round that has requests: one pass answers them all.
  static void serve(Shrinker& shrinker) {
    ShrinkerRound round = shrinker.take_round();
    ASSERT_FALSE(round.requests.empty());
    shrinker.reclaim(false, std::move(round.requests));
  }
  PageLru lru;
};

TEST_F(ShrinkerTest, ShrinkNowReclaimsTheWholeLruAndReportsPagesAndBytes) {
  TestProc one(lru, {}, 1 << 20), two(lru, {LockVariant::named("spin-install")}, 1 << 20);
  park_pages(one, 3);
  park_pages(two, 5);
  Shrinker shrinker(lru);
  std::future<ReclaimResult> done = shrinker.request();
  serve(shrinker);
  ReclaimResult result = done.get();
  EXPECT_EQ(result.pages, 8u);
  EXPECT_EQ(result.bytes, 8 * page());
  EXPECT_EQ(lru.size(), 0u);
  EXPECT_EQ(one.file->resident_pages(0, 1 << 20) + two.file->resident_pages(0, 1 << 20), 0);
  ShrinkerStats stats = shrinker.stats();
  EXPECT_EQ(stats.passes, 1u);
  EXPECT_EQ(stats.requests, 1u);
  EXPECT_EQ(stats.pages, 8u);
  EXPECT_EQ(stats.bytes, 8 * page());
  EXPECT_EQ(stats.pressure_events, 0u);
  done = shrinker.request();
  serve(shrinker);
  EXPECT_EQ(done.get().pages, 0u);  // nothing left
}

TEST_F(ShrinkerTest, ShrinkNowLeavesPagesOfAllocatedBuffersAlone) {
  TestProc proc(lru, {}, 1 << 20);
  Buffer* live = proc.sync_buffer(2 * page());
  park_pages(proc, 4);  // pages 2-5
  Shrinker shrinker(lru);
  EXPECT_EQ(shrinker.reclaim(false).pages, 4u);
  EXPECT_EQ(proc.file->resident_pages(0, 2 * page()), 2);
  proc.alloc->free_buffer(*live);
}

// Requests that arrive before a round are served by that round's one pass.
TEST_F(ShrinkerTest, OnePassAnswersEveryQueuedRequest) {
  TestProc proc(lru, {}, 1 << 20);
  park_pages(proc, 2);
  Shrinker shrinker(lru);
  std::future<ReclaimResult> first = shrinker.request(), second = shrinker.request();
  serve(shrinker);
  EXPECT_EQ(first.get().pages, 2u);
  EXPECT_EQ(second.get().pages, 2u);
  EXPECT_EQ(shrinker.stats().passes, 1u);
  EXPECT_EQ(shrinker.stats().requests, 2u);
  EXPECT_TRUE(shrinker.take_round().requests.empty());
}

TEST_F(ShrinkerTest, PressurePassesAreCounted) {
  TestProc proc(lru, {}, 1 << 20);
  park_pages(proc, 2);
  Shrinker shrinker(lru, false, {"test-pipe"}, {"psi: not here"});
  EXPECT_EQ(shrinker.stats().sources, std::vector<std::string>{"test-pipe"});
  EXPECT_EQ(shrinker.stats().unavailable, std::vector<std::string>{"psi: not here"});
  shrinker.reclaim(true);
  EXPECT_EQ(shrinker.stats().pressure_events, 1u);
  EXPECT_EQ(shrinker.stats().pages, 2u);
  EXPECT_EQ(proc.file->resident_pages(0, 1 << 20), 0);
}

TEST_F(ShrinkerTest, StressModeReachesTheNextRound) {
  Shrinker shrinker(lru, true);
  EXPECT_TRUE(shrinker.stats().stress);
  EXPECT_TRUE(shrinker.take_round().stress);
  shrinker.set_stress(false);
  EXPECT_FALSE(shrinker.take_round().stress);
  EXPECT_FALSE(shrinker.stats().stress);
}

// A stopping loop takes no request; they are answered (empty) when the shrinker goes, so that
// nobody waits forever.
TEST_F(ShrinkerTest, StopEndsTheLoopAndPendingRequestsAreAnswered) {
  TestProc proc(lru, {}, 1 << 20);
  park_pages(proc, 2);
  std::future<ReclaimResult> done;
  {
    Shrinker shrinker(lru);
    done = shrinker.request();
    shrinker.stop();
    ShrinkerRound round = shrinker.take_round();
    EXPECT_TRUE(round.stop);
    EXPECT_TRUE(round.requests.empty());
  }
  ASSERT_EQ(done.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(done.get().pages, 0u);
  EXPECT_EQ(lru.size(), 2u);
}

}  // namespace
}  // namespace cused::core::alloc::testing
