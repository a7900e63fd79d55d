// SPDX-License-Identifier: GPL-2.0-only
// core/proc.cc: the work queues and the choice of thread that proc work wakes (S4.4, S3.2 step 3).
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using ProcTest = World;

// S4.4 / S3.2 step 3: the thread that most recently started waiting for proc work gets it.
TEST_F(ProcTest, MostRecentWaiterGetsProcWork_S4_4) {
  Call first = sm.read(kSmLooper);
  Call second = sm.read(kSmOther);
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  EXPECT_FALSE(first.done());
  ASSERT_TRUE(second.done());
  EXPECT_EQ(second.names(), "BR_NOOP BR_TRANSACTION");
  client.write_read(kClientMain, Commands().transaction(0, 2, 0));
  ASSERT_TRUE(first.done());
  EXPECT_EQ(first.tr().code, 2u);
}

}  // namespace
}  // namespace cused::core::test
