// SPDX-License-Identifier: GPL-2.0-only
// core/transaction_log.cc: the rings of the last transactions and of the failed ones (S4.14), as
// binder_logs/transaction_log and failed_transaction_log print them (S10.6).
#include <gtest/gtest.h>

#include <regex>

#include "tests/unit/core/logs_world.h"

namespace cused::core::test {
namespace {

using TransactionLogTest = LogsWorld;

// S10.6 transaction_log / failed_transaction_log (S4.14): every transaction, and the failures
// with their BR_ code and errno.
TEST_F(TransactionLogTest, TransactionLogsRecordCallsAndFailures_S4_14) {
  publish();
  auto log = lines_of(driver().transaction_log().print());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_TRUE(std::regex_match(
      log[0], std::regex("\\d+: async from 300:301 to 100:0 context binder node \\d+ handle 0 "
                         "size 24:8 ret 0/0 l=0")))
      << log[0];
  EXPECT_EQ(driver().failed_transaction_log().print(), "");

  Call bad = client.write_read(kClientMain, Commands().transaction(77, 1, 0));
  auto failed = lines_of(driver().failed_transaction_log().print());
  ASSERT_EQ(failed.size(), 1u);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      failed[0], m,
      std::regex("(\\d+): call  from 200:201 to 0:0 context binder node 0 handle 77 size 0:0 "
                 "ret (\\d+)/(-?\\d+) l=(\\d+)")))
      << failed[0];
  EXPECT_EQ(std::stoul(m[2]), BR_FAILED_REPLY);
  EXPECT_EQ(std::stoi(m[3]), -EINVAL);
  EXPECT_GT(std::stoi(m[4]), 0);
  EXPECT_EQ(lines_of(driver().transaction_log().print()).back(), failed[0]);
  (void)bad;
}

// The rings keep the last 32 entries, oldest first.
TEST_F(TransactionLogTest, TransactionLogKeepsTheLast32_S4_14) {
  for (int i = 0; i < 40; ++i) client.write_read(kClientMain, Commands().transaction(77, 1, 0));
  auto failed = lines_of(driver().failed_transaction_log().print());
  ASSERT_EQ(failed.size(), 32u);
  int previous = 0;
  for (const auto& line : failed) {
    int id = std::stoi(line);
    EXPECT_GT(id, previous);
    previous = id;
  }
  EXPECT_EQ(driver().transaction_log().entries().size(), 32u);
}

}  // namespace
}  // namespace cused::core::test
