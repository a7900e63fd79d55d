// SPDX-License-Identifier: GPL-2.0-only
// core/debug_print.cc: binder_logs (S10.6): the kernel's text formats, parsed back and checked
// against the state the test built (threads, nodes, refs, buffers, pages, counters, transaction
// rings).
#include "core/debug_print.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "core/device_variant.h"
#include "tests/unit/core/logs_world.h"

namespace cused::core::test {
namespace {

using LogsTest = LogsWorld;

// S10.6 / S9.12: a proc's stats block, with a call in flight to the server.
TEST_F(LogsTest, ProcStatsBlockMatchesTheState_S10_6) {
  std::uint32_t handle = fetch(publish());
  Call call = client.write_read(kClientMain, Commands().transaction(handle, 9, 0, Parcel().u32(7)));
  read_now(server, kServerLooper);  // the server holds the call's buffer, unreplied
  Call oneway = client.write_read(kClientOther, Commands().transaction(handle, 5, TF_ONE_WAY));

  auto block = proc_block(stats(), kServer);
  ASSERT_GE(block.size(), 3u);
  EXPECT_EQ(block[1], "context binder");
  EXPECT_EQ(block[2], "  variant: " + to_string(server.proc().options()));
  EXPECT_EQ(value_of(block, "  threads: "), 2);
  EXPECT_EQ(matching(block, "  requested threads: 0\\+0/0").size(), 1u);
  EXPECT_EQ(value_of(block, "  nodes: "), 1);
  EXPECT_EQ(matching(block, "  refs: 0 s 0 w 0").size(), 1u);  // handle 0 needs no ref
  EXPECT_EQ(value_of(block, "  buffers: "), 2);  // the call being served, the queued oneway
  EXPECT_EQ(value_of(block, "  pending transactions: "), 1);  // the oneway on the proc queue
  auto pages = matching(block, "  pages: (\\d+):(\\d+):(\\d+)");
  ASSERT_EQ(pages.size(), 1u);
  alloc::AllocatorStats space = server.proc().allocator().stats();
  EXPECT_EQ(std::stoul(pages[0][1]), space.pages.active);
  EXPECT_EQ(std::stoul(pages[0][2]), space.pages.lru);
  EXPECT_EQ(std::stoul(pages[0][3]), space.pages.free);
  EXPECT_GE(space.pages.active, 1u);
  EXPECT_EQ(std::stoul(pages[0][1]) + std::stoul(pages[0][2]) + std::stoul(pages[0][3]),
            space.size / 4096);
  EXPECT_EQ(value_of(block, "  pages high watermark: "), static_cast<long>(space.pages_high));
  EXPECT_EQ(value_of(block, "  free async space "), static_cast<long>(space.free_async_space));
  EXPECT_LT(space.free_async_space, space.size / 2);  // the queued oneway uses async space

  auto client_block = proc_block(stats(), kClient);
  EXPECT_EQ(matching(client_block, "  refs: 1 s 1 w 1").size(), 1u);  // `handle`, kept by fetch()
  EXPECT_EQ(value_of(client_block, "  BC_TRANSACTION: "), 3);
  (void)call;
  (void)oneway;
}

// S10.6 `state`: the per-thread, node, ref and buffer lines of a call in flight, and that the ids
// printed in them agree with each other.
TEST_F(LogsTest, StateShowsTheCallInFlight_S10_6) {
  std::uint32_t handle = fetch(publish());
  Call call =
      client.write_read(kClientMain, Commands().transaction(handle, 0x2a, 0, Parcel().u64(1)));
  read_now(server, kServerLooper);
  std::string text = DebugPrint::state(driver());
  EXPECT_EQ(lines_of(text)[0], "binder state:");

  auto server_block = proc_block(text, kServer);
  const std::string txn =
      "(\\d+): 0{16} from 200:201 to 300:301 code 2a flags 0 pri 0 a0 r1 "
      "elapsed \\d+ms";
  auto incoming = matching(
      server_block, "    incoming transaction " + txn + " node (\\d+) size 8:0 offset ([0-9a-f]+)");
  ASSERT_EQ(incoming.size(), 1u) << text;
  auto nodes = matching(server_block,
                        "  node (\\d+): u000000000000a000 c000000000000c000 hs 1 hw 1 ls 1 lw 0 "
                        "is 2 iw 2 tr 1 proc (\\d+) (\\d+)");
  // ls 1: the call's buffer holds a local strong ref (S6.7); is 2: two strong refs; tr 1: the
  // printer's own temporary reference, as the kernel's printer holds one.
  ASSERT_EQ(nodes.size(), 1u) << text;
  EXPECT_EQ(incoming[0][2], nodes[0][1]);  // the call targets the service node
  std::set<std::string> holders{nodes[0][2], nodes[0][3]};
  EXPECT_EQ(holders, (std::set<std::string>{"100", "200"}));
  auto threads = matching(server_block, "  thread (\\d+): l ([0-9a-f]{2}) need_return 0 tr 0");
  EXPECT_EQ(threads.size(), 2u);
  auto buffers =
      matching(server_block, "  buffer (\\d+): ([0-9a-f]+) size 8:0:0 (active|delivered)");
  ASSERT_EQ(buffers.size(), 1u) << text;
  EXPECT_EQ(buffers[0][1], incoming[0][1]);  // the buffer carries the transaction's id
  EXPECT_EQ(buffers[0][2], incoming[0][3]);
  EXPECT_EQ(buffers[0][3], "active");

  auto client_block = proc_block(text, kClient);
  auto outgoing = matching(client_block, "    outgoing transaction " + txn);
  ASSERT_EQ(outgoing.size(), 1u) << text;
  EXPECT_EQ(outgoing[0][1], incoming[0][1]);
  auto refs = matching(client_block, "  ref (\\d+): desc (\\d+) node (\\d+) s 1 w 1 d 0{16}");
  ASSERT_EQ(refs.size(), 1u) << text;
  EXPECT_EQ(refs[0][2], std::to_string(handle));
  EXPECT_EQ(refs[0][3], nodes[0][1]);
  (void)call;
}

// S10.6 `transactions`: procs with nothing in flight are left out; `state` lists every proc.
TEST_F(LogsTest, TransactionsListsOnlyProcsWithWork_S10_6) {
  std::uint32_t handle = fetch(publish());
  read_now(sm, kSmLooper);  // the manager's deferred completion of its reply
  std::string idle = DebugPrint::transactions(driver());
  EXPECT_EQ(idle, "binder transactions:\n");
  Call call = client.write_read(kClientMain, Commands().transaction(handle, 3, 0));
  std::string busy = DebugPrint::transactions(driver());
  EXPECT_FALSE(proc_block(busy, kClient).empty()) << busy;
  EXPECT_FALSE(proc_block(busy, kServer).empty()) << busy;  // the call waits on its queue
  EXPECT_TRUE(proc_block(busy, kSm).empty()) << busy;
  EXPECT_EQ(matching(proc_block(busy, kServer),
                     "  pending transaction \\d+: .* from 200:201 to 300:0 code 3 .*")
                .size(),
            1u)
      << busy;
  EXPECT_FALSE(proc_block(DebugPrint::state(driver()), kSm).empty());
  (void)call;
}

// S9.12: a queued oneway names its sender as the kernel's from_pid/from_tid do, though a oneway
// has no sending thread to answer (t->from is NULL on both drivers).
TEST_F(LogsTest, AQueuedOnewayNamesItsSender_S9_12) {
  std::uint32_t handle = fetch(publish());
  read_now(sm, kSmLooper);
  Call call = client.write_read(kClientMain, Commands().transaction(handle, 4, TF_ONE_WAY));
  std::string state = DebugPrint::state(driver());
  EXPECT_EQ(matching(proc_block(state, kServer),
                     "  pending transaction \\d+: .* from 200:201 to 300:0 code 4 flags 1 .*")
                .size(),
            1u)
      << state;
  (void)call;
}

// S9.12: the completion of a oneway to a frozen proc, until its sender reads it, is listed as the
// kernel's printer lists a BINDER_WORK_TRANSACTION_PENDING: by its type's number, 3 (found by
// binder-diff: freeze-5297).
TEST_F(LogsTest, AQueuedPendingFrozenCompletionIsListedAsTheKernelsType3_S9_12) {
  binder_freeze_info freeze{static_cast<__u32>(kSm), 1, 0};
  ASSERT_EQ(client.ioctl(kClientMain, BINDER_FREEZE, freeze), 0);
  Call sent = client.write(kClientMain, Commands().transaction(0, 7, TF_ONE_WAY));
  std::string state = DebugPrint::state(driver());
  auto client_block = proc_block(state, kClient);
  EXPECT_EQ(matching(client_block, "    unknown work: type 3").size(), 1u) << state;
  EXPECT_TRUE(matching(client_block, ".*transaction complete").empty()) << state;
  EXPECT_EQ(client.read(kClientMain).names(), "BR_NOOP BR_TRANSACTION_PENDING_FROZEN");
  (void)sent;
}

// S10.6 `proc/<pid>`: the full block of that pid's procs; nothing for a pid without one.
TEST_F(LogsTest, ProcFileShowsOnePid_S10_6) {
  publish();
  std::string text = DebugPrint::proc(driver(), kServer);
  EXPECT_EQ(text.rfind("binder proc state:\nproc 300\ncontext binder\n", 0), 0u) << text;
  EXPECT_TRUE(proc_block(text, kSm).empty());
  EXPECT_EQ(DebugPrint::proc(driver(), 4242), "");
}

// S10.6 `state`: a node whose owner died while a ref held it is listed under "dead nodes:", and
// the holder's ref says "dead node".
TEST_F(LogsTest, DeadNodesAreListed_S10_6) {
  std::uint32_t handle = publish();
  server.release();
  std::string text = DebugPrint::state(driver());
  auto lines = lines_of(text);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1], "dead nodes:");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      lines[2], m,
      std::regex("  node (\\d+): u000000000000a000 c000000000000c000 hs \\d hw \\d ls 0 lw 0 "
                 "is \\d+ iw 1 tr \\d+ proc 100")))
      << text;
  auto refs = matching(proc_block(text, kSm), "  ref \\d+: desc (\\d+) dead node (\\d+) .*");
  ASSERT_EQ(refs.size(), 1u) << text;
  EXPECT_EQ(refs[0][1], std::to_string(handle));
  EXPECT_EQ(refs[0][2], m[1]);
  EXPECT_TRUE(proc_block(text, kServer).empty());
}

}  // namespace
}  // namespace cused::core::test
