// SPDX-License-Identifier: GPL-2.0-only
// S4.9, S2.4: a context manager that asks for its callers' security contexts, as Android's
// servicemanager does (BINDER_SET_CONTEXT_MGR_EXT with FLAT_BINDER_FLAG_TXN_SECURITY_CTX).
#include <gtest/gtest.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "client/cused_differences.h"
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

// How the driver answers a call to a manager that wants security contexts.
enum Mode : std::uint64_t {
  kLabelled = 1,  // BR_TRANSACTION_SEC_CTX with the sender's label (SELinux, Smack; cused)
  kRefused = 2,   // BR_FAILED_REPLY: the kernel on LSMs that give no label (AppArmor, none)
};

std::string ModeName(Mode mode) { return mode == kLabelled ? "labelled" : "refused"; }

// Whether the running kernel has an LSM that labels tasks for binder: only SELinux and Smack
// turn a task's secid into a context; under the others (AppArmor, the guest's 6.12 by default)
// the kernel's binder fails the call.
bool KernelLsmLabelsTasks() {
  std::ifstream file("/sys/kernel/security/lsm");
  std::string list;
  std::getline(file, list);
  std::istringstream names(list);
  for (std::string name; std::getline(names, name, ',');)
    if (name == "selinux" || name == "smack") return true;
  return false;
}

// The answer docs/binderfs.md documents for the device under test (S4.9): cused, on each of its
// paths, always labels (the host's label or its fallback `unconfined`); the kernel labels only
// under SELinux or Smack and otherwise refuses with -EINVAL.
Mode DocumentedMode() {
  const std::string& path = DevicePath();
  if (client::served_by_cused(path) || client::served_by_cuse(path) || client::under_cused_run())
    return kLabelled;
  return KernelLsmLabelsTasks() ? kLabelled : kRefused;
}

// binder_transaction's err_get_secctx_failed: the whole extended error (S2.14) names this
// transaction (a debug id after `previous_id`, each call gets its own), the BR_FAILED_REPLY the
// caller read, and -EINVAL. Returns the id.
std::uint32_t ExpectRefusedWithEinval(const Endpoint& endpoint, std::uint32_t previous_id) {
  binder_extended_error error = endpoint.extended_error();
  EXPECT_GT(error.id, previous_id) << "the refusal names no new transaction";
  EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
  EXPECT_EQ(error.param, -EINVAL);
  return error.id;
}

// The client's side: each call's outcome, which must be the documented one for every call.
// `refused_id` is the debug id of the last refusal seen.
Mode CallManager(const Endpoint& endpoint, int i, std::uint32_t& refused_id) {
  EXPECT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "call " + std::to_string(i))), 0);
  std::vector<Return> returns;
  if (!endpoint.read(returns) || returns.empty()) {
    ADD_FAILURE() << "no answer to call " << i;
    return kRefused;
  }
  if (returns.back().code == BR_FAILED_REPLY) {
    refused_id = ExpectRefusedWithEinval(endpoint, refused_id);
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
// servicemanager). The driver must give the answer docs/binderfs.md documents for it
// (DocumentedMode): cused labels every call, BR_TRANSACTION_SEC_CTX with a readable label
// (replies carry none); the kernel under LSMs that give no label (the guest's 6.12 with AppArmor)
// fails every call with BR_FAILED_REPLY and the extended error -EINVAL, and the manager sees
// nothing. Either way every call of several is answered the same way: a label that cannot be had
// must not end the driver (real-clients issue, P0: the daemon died on the first call).
TEST(SecurityContext, ManagerWithSecurityContextsGetsTheSendersLabel_S4_9_S2_4) {
  const Mode documented = DocumentedMode();
  std::printf("documented answer here: %s\n", ModeName(documented).c_str());
  Channel manager_ready, mode;
  Child manager([&] {
    Endpoint endpoint(DevicePath());
    flat_binder_object node{};
    node.flags = FLAT_BINDER_FLAG_TXN_SECURITY_CTX;
    ASSERT_TRUE(endpoint.become_context_manager(&node));
    ASSERT_EQ(endpoint.write(Commands().code(BC_ENTER_LOOPER)), 0);
    manager_ready.send(1);
    std::uint64_t how = 0;  // the answer the client got, so that the manager never waits in vain
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
    EXPECT_EQ(ModeName(first), ModeName(documented)) << "not the answer docs/binderfs.md gives";
    std::uint32_t refused_id = 0;
    if (first == kRefused) {
      refused_id = ExpectRefusedWithEinval(endpoint, refused_id);
      std::printf("the driver refused the call: extended error -EINVAL\n");
    } else {
      EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
    }
    for (int i = 0; i < kCalls; ++i)
      EXPECT_EQ(ModeName(CallManager(endpoint, i, refused_id)), ModeName(first)) << "call " << i;
  });
  EXPECT_TRUE(client.finish());
  EXPECT_TRUE(manager.finish());
}

}  // namespace
}  // namespace cused::conformance
