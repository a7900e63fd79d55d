// SPDX-License-Identifier: GPL-2.0-only
// core/wake.cc: a read without work parks its request, and whoever queues work for it completes
// it (no daemon thread waits for binder work, docs/design.md section 3).
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using WakeTest = World;

// S3.2 step 3: a read without work parks and the sender's write completes it (no daemon thread
// waits); S3.4: the waiting thread gets the transaction.
TEST_F(WakeTest, ParkedReaderIsCompletedBySender_S3_2) {
  Call waiting = sm.read(kSmLooper);
  ASSERT_FALSE(waiting.done());
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  ASSERT_TRUE(waiting.done());
  EXPECT_EQ(waiting.names(), "BR_NOOP BR_TRANSACTION");
  EXPECT_FALSE(call.done());
}

}  // namespace
}  // namespace cused::core::test
