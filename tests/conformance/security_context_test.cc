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

// How the driver answered the first call to a manager that wants security contexts.
enum Mode : std::uint64_t {
  kLabelled = 1,  // BR_TRANSACTION_SEC_CTX with the sender's label (SELinux; cused's fallback)
  kRefused = 2,   // BR_FAILED_REPLY: the kernel on an LSM that gives no label (AppArmor, none)
};

// The client's side: each call's outcome, which must be the same for every call.
Mode CallManager(const Endpoint& endpoint, int i) {
  EXPECT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "call " + std::to_string(i))), 0);
  std::vector<Return> returns;
  if (!endpoint.read(returns) || returns.empty()) {
    ADD_FAILURE() << "no answer to call " << i;
    return kRefused;
  }
  if (returns.back().code == BR_FAILED_REPLY) {
    // binder_transaction's err_get_secctx_failed: the LSM's errno in the extended error (S2.14).
    binder_extended_error error = endpoint.extended_error();
    EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
    EXPECT_LT(error.param, 0);
    return kRefused;
  }
  if (returns.back().code != BR_REPLY) {
    EXPECT_TRUE(endpoint.read_until(BR_REPLY, returns));
  }
  EXPECT_EQ(returns.back().code, static_cast<std::uint32_t>(BR_REPLY));
  EXPECT_EQ(returns.back().data(), "done");
  EXPECT_EQ(endpoint.write(Commands().free_buffer(returns.back().txn.data.ptr.buffer)), 0);
  return kLabelled;
}

// The manager's side of one labelled call: the label lies in the transaction's own buffer, after
// the offsets array (the kernel puts it in the extra-buffers area), and is a readable string.
void ServeLabelledCall(const Endpoint& endpoint, int i) {
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));
  ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_SEC_CTX}));
  const Return& call = returns[1];
  EXPECT_EQ(call.data(), "call " + std::to_string(i));
  EXPECT_GE(call.secctx, call.txn.data.ptr.offsets + call.txn.offsets_size);
  std::string label = LabelAt(call.secctx);
  EXPECT_FALSE(label.empty()) << "no readable label at the secctx pointer";
  if (i == 0) std::printf("sender's label: \"%s\"\n", label.c_str());
  ASSERT_EQ(
      endpoint.write(Commands().free_buffer(call.txn.data.ptr.buffer).reply(kReplyCode, "done")),
      0);
  ASSERT_TRUE(endpoint.read(returns));
  EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
}

// S4.9, S2.4: a manager registered with FLAT_BINDER_FLAG_TXN_SECURITY_CTX (Android's
// servicemanager). Where the sender has a label, every call reaches the manager as
// BR_TRANSACTION_SEC_CTX (replies carry none); where the kernel's LSMs give none (the guest's
// 6.12 with AppArmor), every call fails with BR_FAILED_REPLY and the LSM's errno, and the manager
// sees nothing. cused always has a label: the host's, or its fallback (docs/binderfs.md). Either
// way every call of several is answered the same way: a label that cannot be had must not end the
// driver (real-clients issue, P0: the daemon died on the first call).
TEST(SecurityContext, ManagerWithSecurityContextsGetsTheSendersLabel_S4_9_S2_4) {
  Channel manager_ready, mode;
  Child manager([&] {
    Endpoint endpoint(DevicePath());
    flat_binder_object node{};
    node.flags = FLAT_BINDER_FLAG_TXN_SECURITY_CTX;
    ASSERT_TRUE(endpoint.become_context_manager(&node));
    ASSERT_EQ(endpoint.write(Commands().code(BC_ENTER_LOOPER)), 0);
    manager_ready.send(1);
    std::uint64_t how = 0;
    ASSERT_TRUE(mode.receive(how));
    if (how == kRefused) {
      EXPECT_TRUE(endpoint.quiet_for()) << "a refused call reached the manager";
      return;
    }
    std::vector<Return> returns;  // the oneway that told the modes apart
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_SEC_CTX}));
    EXPECT_EQ(returns[1].txn.flags & TF_ONE_WAY, static_cast<std::uint32_t>(TF_ONE_WAY));
    EXPECT_FALSE(LabelAt(returns[1].secctx).empty());
    ASSERT_EQ(endpoint.write(Commands().free_buffer(returns[1].txn.data.ptr.buffer)), 0);
    for (int i = 0; i < kCalls; ++i) ServeLabelledCall(endpoint, i);
  });
  Child client([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    // A oneway tells the modes apart without timing: its completion (or the refusal) is
    // readable at once, where a sync call's completion waits for the reply (S3.6).
    ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "oneway", TF_ONE_WAY)), 0);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_FALSE(returns.empty());
    Mode first = returns.back().code == BR_FAILED_REPLY ? kRefused : kLabelled;
    mode.send(first);
    if (first == kRefused) {
      binder_extended_error error = endpoint.extended_error();
      EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
      EXPECT_LT(error.param, 0);
      std::printf("the driver refused the call: extended error %d\n", error.param);
    } else {
      EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
    }
    for (int i = 0; i < kCalls; ++i) EXPECT_EQ(CallManager(endpoint, i), first) << "call " << i;
  });
  EXPECT_TRUE(client.finish());
  EXPECT_TRUE(manager.finish());
}

}  // namespace
}  // namespace cused::conformance
