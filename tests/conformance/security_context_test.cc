// S4.9, S2.4: a context manager that asks for its callers' security contexts, as Android's
// servicemanager does (BINDER_SET_CONTEXT_MGR_EXT with FLAT_BINDER_FLAG_TXN_SECURITY_CTX).
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

constexpr std::uint32_t kReplyCode = 0x5f534358;
constexpr int kCalls = 3;

// The label the driver put at `secctx`: its printable bytes up to the terminating NUL (or up to
// the first byte that cannot be part of one: a kernel LSM may count the label without its NUL,
// the buffer's alignment padding follows it).
std::string LabelAt(binder_uintptr_t secctx) {
  const char* text = reinterpret_cast<const char*>(secctx);
  std::string label;
  for (std::size_t i = 0; i < 256 && std::isprint(static_cast<unsigned char>(text[i])); ++i)
    label.push_back(text[i]);
  return label;
}

// S4.9: every call reaches the manager as BR_TRANSACTION_SEC_CTX; the label lies in the
// transaction's own buffer, after the offsets array (the kernel puts it in the extra-buffers
// area), and is a readable string. Replies carry none. Each of several calls from one client
// works: a label that cannot be had must not end the driver (real-clients issue, P0).
TEST(SecurityContext, ManagerWithSecurityContextsGetsTheSendersLabel_S4_9_S2_4) {
  Channel manager_ready;
  Child manager([&] {
    Endpoint endpoint(DevicePath());
    flat_binder_object node{};
    node.flags = FLAT_BINDER_FLAG_TXN_SECURITY_CTX;
    ASSERT_TRUE(endpoint.become_context_manager(&node));
    ASSERT_EQ(endpoint.write(Commands().code(BC_ENTER_LOOPER)), 0);
    manager_ready.send(1);
    for (int i = 0; i < kCalls; ++i) {
      std::vector<Return> returns;
      ASSERT_TRUE(endpoint.read(returns));
      ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_SEC_CTX}));
      const Return& call = returns[1];
      EXPECT_EQ(call.data(), "call " + std::to_string(i));
      EXPECT_GE(call.secctx, call.txn.data.ptr.offsets + call.txn.offsets_size);
      std::string label = LabelAt(call.secctx);
      EXPECT_FALSE(label.empty()) << "no readable label at the secctx pointer";
      if (i == 0) std::printf("sender's label: \"%s\"\n", label.c_str());
      ASSERT_EQ(endpoint.write(
                    Commands().free_buffer(call.txn.data.ptr.buffer).reply(kReplyCode, "done")),
                0);
      ASSERT_TRUE(endpoint.read(returns));
      EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
    }
  });
  Child client([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    for (int i = 0; i < kCalls; ++i) {
      ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "call " + std::to_string(i))),
                0);
      std::vector<Return> returns;
      ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
      ASSERT_TRUE(HasCodes(returns, {BR_TRANSACTION_COMPLETE, BR_REPLY}));
      EXPECT_EQ(returns[1].data(), "done");
      ASSERT_EQ(endpoint.write(Commands().free_buffer(returns[1].txn.data.ptr.buffer)), 0);
    }
  });
  EXPECT_TRUE(client.finish());
  EXPECT_TRUE(manager.finish());
}

}  // namespace
}  // namespace cused::conformance
