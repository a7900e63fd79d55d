// SPDX-License-Identifier: GPL-2.0-only
#include "tests/conformance/scenario.h"

#include <gtest/gtest.h>

#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"

namespace cused::conformance {

Endpoint ContextManager() {
  Endpoint manager(DevicePath());
  EXPECT_TRUE(manager.become_context_manager());
  EXPECT_EQ(manager.write(Commands().code(BC_ENTER_LOOPER)), 0);
  return manager;
}

void ManagerAndClient(const std::function<void(const Endpoint&)>& manager,
                      const std::function<void(const Endpoint&)>& client) {
  Channel manager_ready;
  Child manager_process([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(1);
    manager(endpoint);
  });
  Child client_process([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    client(endpoint);
  });
  EXPECT_TRUE(client_process.finish());
  EXPECT_TRUE(manager_process.finish());
}

void ManagerReceivesNothing(const Channel& sent, const char* delivered,
                            const std::function<void(const Endpoint&)>& client) {
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        ASSERT_TRUE(sent.wait());
        EXPECT_TRUE(endpoint.quiet_for()) << delivered;
      },
      client);
}

::testing::AssertionResult ReceiveTransaction(const Endpoint& endpoint, Return& txn) {
  std::vector<Return> returns;
  if (auto result = endpoint.read(returns); !result) return result;
  if (auto result = HasCodes(returns, {BR_NOOP, BR_TRANSACTION}); !result) return result;
  txn = returns[1];
  return ::testing::AssertionSuccess();
}

void CallAndExpectFailureAfterCompletion(const Endpoint& caller, std::string_view data,
                                         std::uint32_t failure) {
  ASSERT_EQ(caller.write(Commands().transaction(0, kCallCode, data)), 0);
  std::vector<Return> returns;
  ASSERT_TRUE(caller.read_until(failure, returns));
  EXPECT_TRUE(HasCodes(returns, {BR_TRANSACTION_COMPLETE, failure}));
}

}  // namespace cused::conformance
