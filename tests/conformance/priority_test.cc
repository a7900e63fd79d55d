// SPDX-License-Identifier: GPL-2.0-only
// S4.12: binder's nice inheritance (binder_set_nice in binder_thread_read and binder_transaction).
// A thread that receives a sync call runs at the sender's nice when that is more urgent than the
// node's minimum, else at the minimum; a oneway only brings a less urgent thread to the minimum;
// the reply restores the nice the thread had when the call arrived; a thread that waits for proc
// work goes back to its proc's default, the opener's nice. The nice is the calling thread's
// (getpriority(PRIO_PROCESS, gettid())).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

constexpr std::uint32_t kReplyCode = 0x5f505249;

int MyNice() {
  errno = 0;
  return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
}

void SetMyNice(int nice) {
  ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice), 0);
}

// The driver may make a thread more urgent only with CAP_SYS_NICE or RLIMIT_NICE (can_nice()).
#define SKIP_UNLESS_ROOT()                                                             \
  do {                                                                                 \
    if (geteuid() != 0) GTEST_SKIP() << "binder lowers a thread's nice only for root"; \
  } while (0)

// A context manager whose node has minimum priority `min_nice` (FLAT_BINDER_FLAG_PRIORITY_MASK).
Endpoint ManagerWithMinPriority(int min_nice) {
  Endpoint endpoint(DevicePath());
  flat_binder_object node{};
  node.flags = static_cast<std::uint32_t>(min_nice) & FLAT_BINDER_FLAG_PRIORITY_MASK;
  EXPECT_TRUE(endpoint.become_context_manager(&node));
  EXPECT_EQ(endpoint.write(Commands().code(BC_ENTER_LOOPER)), 0);
  return endpoint;
}

// A sync call to the manager from a thread at `nice`; the reply's data.
std::string CallAtNice(const Endpoint& endpoint, int nice, std::uint32_t flags = 0) {
  SetMyNice(nice);
  EXPECT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "call", flags)), 0);
  std::vector<Return> returns;
  if (flags & TF_ONE_WAY) {
    EXPECT_TRUE(endpoint.read(returns));
    return "";
  }
  EXPECT_TRUE(endpoint.read_until(BR_REPLY, returns));
  if (returns.empty() || returns.back().code != BR_REPLY) return "no reply";
  EXPECT_EQ(endpoint.write(Commands().free_buffer(returns.back().txn.data.ptr.buffer)), 0);
  return returns.back().data();
}

// The manager's side of one sync call: the nice it ran the call at, then the nice after its reply.
void ServeAndReport(const Endpoint& endpoint, int& during, int& after) {
  Return txn;
  ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
  during = MyNice();
  ASSERT_EQ(
      endpoint.write(Commands().free_buffer(txn.txn.data.ptr.buffer).reply(kReplyCode, "done")), 0);
  after = MyNice();
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));  // BR_TRANSACTION_COMPLETE
}

// S4.12: the sender (nice 5) is more urgent than the node's minimum (19): the receiver runs the
// call at 5. It had set itself to 9, but waiting for proc work put it back to its proc's default
// (its nice at open: 0, or the nice the suite was started with), which its reply restores.
TEST(Priority, SyncCallRunsAtTheSendersNiceAndTheReplyRestoresTheProcDefault_S4_12) {
  SKIP_UNLESS_ROOT();
  Channel ready;
  Child manager_process([&] {
    Endpoint endpoint = ManagerWithMinPriority(19);
    const int default_nice = MyNice();  // its proc's default: the nice it opened with
    SetMyNice(9);
    ready.send(1);
    int during = 0, after = 0;
    ServeAndReport(endpoint, during, after);
    EXPECT_EQ(during, 5) << "the call ran at the receiver's nice, not the sender's";
    EXPECT_EQ(after, default_nice) << "the reply did not restore the proc's default nice";
  });
  Child client_process([&] {
    ASSERT_TRUE(ready.wait());
    Endpoint endpoint(DevicePath());
    EXPECT_EQ(CallAtNice(endpoint, 5), "done");
    EXPECT_EQ(MyNice(), 5) << "the sender's own nice changed";
  });
  EXPECT_TRUE(client_process.finish());
  EXPECT_TRUE(manager_process.finish());
}

// S4.12: the node's minimum (3) is more urgent than the sender (nice 10): a sync call runs at 3,
// and the reply restores the receiver's default (12, its nice at open). A oneway brings the
// receiver, back at 12 while it waited, to the minimum too (12 is less urgent than 3).
TEST(Priority, NodeMinimumBoundsSyncCallsAndOnewaysRaiseALessUrgentThread_S4_12) {
  SKIP_UNLESS_ROOT();
  Channel ready, oneway_seen;
  Child manager_process([&] {
    SetMyNice(12);
    Endpoint endpoint = ManagerWithMinPriority(3);
    ready.send(1);
    int during = 0, after = 0;
    ServeAndReport(endpoint, during, after);
    EXPECT_EQ(during, 3) << "the node's minimum priority was not applied";
    EXPECT_EQ(after, 12) << "the reply did not restore the receiver's nice";
    Return txn;
    ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
    EXPECT_EQ(txn.txn.flags & TF_ONE_WAY, static_cast<std::uint32_t>(TF_ONE_WAY));
    EXPECT_EQ(MyNice(), 3) << "a oneway left a less urgent receiver above the node's minimum";
    ASSERT_EQ(endpoint.write(Commands().free_buffer(txn.txn.data.ptr.buffer)), 0);
    oneway_seen.send(1);
  });
  Child client_process([&] {
    ASSERT_TRUE(ready.wait());
    Endpoint endpoint(DevicePath());
    EXPECT_EQ(CallAtNice(endpoint, 10), "done");
    CallAtNice(endpoint, 10, TF_ONE_WAY);
    ASSERT_TRUE(oneway_seen.wait());
  });
  EXPECT_TRUE(client_process.finish());
  EXPECT_TRUE(manager_process.finish());
}

}  // namespace
}  // namespace cused::conformance
