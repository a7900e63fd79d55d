// SPDX-License-Identifier: GPL-2.0-only
// core/stats.cc: the driver's and each proc's counters (binder_stats), as binder_logs/stats prints
// them (S10.6).
#include <gtest/gtest.h>

#include "tests/unit/core/logs_world.h"

namespace cused::core::test {
namespace {

using StatsTest = LogsWorld;

// S10.6 `stats`: global counters, object counts, and per proc the numbers the test created.
TEST_F(StatsTest, StatsCountCommandsReturnsAndObjects_S10_6) {
  publish();
  auto global = lines_of(stats());
  ASSERT_FALSE(global.empty());
  EXPECT_EQ(global[0], "binder stats:");
  // publish(): the server's oneway, its two *_DONE; the manager's INCREFS/ACQUIRE/FREE_BUFFER.
  EXPECT_EQ(value_of(global, "BC_TRANSACTION: "), 1);
  EXPECT_EQ(value_of(global, "BC_INCREFS_DONE: "), 1);
  EXPECT_EQ(value_of(global, "BC_FREE_BUFFER: "), 1);
  EXPECT_EQ(value_of(global, "BR_TRANSACTION: "), 1);
  EXPECT_EQ(value_of(global, "BR_TRANSACTION_COMPLETE: "), 1);
  EXPECT_EQ(value_of(global, "BR_NOOP: "), -1);  // the read's opening BR_NOOP is not counted
  EXPECT_EQ(matching(global, "proc: active 3 total 3").size(), 1u);
  EXPECT_EQ(matching(global, "thread: active 6 total 6").size(), 1u);
  // The manager's node and the service node; the manager's ref to the service.
  EXPECT_EQ(matching(global, "node: active 2 total 2").size(), 1u);
  EXPECT_EQ(matching(global, "ref: active 1 total 1").size(), 1u);
  EXPECT_EQ(matching(global, "transaction: active 0 total 1").size(), 1u);
  EXPECT_EQ(matching(global, "transaction_complete: active 0 total 1").size(), 1u);
  EXPECT_EQ(matching(global, "device binder").size(), 1u);

  auto server_block = proc_block(stats(), kServer);
  EXPECT_EQ(value_of(server_block, "  BC_TRANSACTION: "), 1);
  EXPECT_EQ(value_of(server_block, "  BR_INCREFS: "), 1);
  EXPECT_EQ(value_of(server_block, "  BR_ACQUIRE: "), 1);
  EXPECT_EQ(value_of(server_block, "  BC_FREE_BUFFER: "), -1);  // that was the manager's
  auto sm_block = proc_block(stats(), kSm);
  EXPECT_EQ(value_of(sm_block, "  BC_FREE_BUFFER: "), 1);
  EXPECT_EQ(value_of(sm_block, "  BR_TRANSACTION: "), 1);
}

}  // namespace
}  // namespace cused::core::test
