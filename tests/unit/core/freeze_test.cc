// SPDX-License-Identifier: GPL-2.0-only
// core/freeze.cc: BINDER_FREEZE / BINDER_GET_FROZEN_INFO (S2.10, S2.11), frozen targets and
// TF_UPDATE_TXN (S4.13).
#include <gtest/gtest.h>

#include <chrono>

#include "tests/unit/core/freezer.h"

namespace cused::core::test {
namespace {

using FreezeTest = FreezeWorld;

// S2.10 / S2.11: no proc with that pid -> EINVAL, for freeze, thaw and the info alike; a short
// argument is EFAULT.
TEST_F(FreezeTest, UnknownPidIsEinval_S2_10_S2_11) {
  EXPECT_EQ(freeze(999, true), -EINVAL);
  EXPECT_EQ(freeze(999, false), -EINVAL);
  frozen_info(999, -EINVAL);
  std::uint32_t short_arg = kSm;
  EXPECT_EQ(freezer.ioctl(kFreezerMain, BINDER_FREEZE, short_arg), -EFAULT);
  EXPECT_EQ(freezer.ioctl(kFreezerMain, BINDER_GET_FROZEN_INFO, short_arg), -EFAULT);
}

// S4.13: a sync call to a frozen proc fails with BR_FROZEN_REPLY and sets sync_recv bit 0; a thaw
// clears the bits and calls go through again.
TEST_F(FreezeTest, SyncCallToFrozenProcIsFrozenReply_S4_13) {
  ASSERT_EQ(freeze(kSm, true), 0);
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FROZEN_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).command, BR_FROZEN_REPLY);
  binder_frozen_status_info info = frozen_info(kSm);
  EXPECT_EQ(info.sync_recv, 1u);
  EXPECT_EQ(info.async_recv, 0u);
  ASSERT_EQ(freeze(kSm, false), 0);
  info = frozen_info(kSm);
  EXPECT_EQ(info.sync_recv, 0u);
  client.write_read(kClientMain, Commands().transaction(0, 2, 0));
  EXPECT_EQ(read_now(sm, kSmLooper).tr().code, 2u);
}

// S4.13 / S3.4: a oneway to a frozen proc is queued; the sender hears
// BR_TRANSACTION_PENDING_FROZEN; async_recv is set and the queued txn shows as pending (bit 1).
// Thawing leaves it queued for the proc to read.
TEST_F(FreezeTest, OnewayToFrozenProcIsPendingFrozen_S4_13) {
  ASSERT_EQ(freeze(kSm, true), 0);
  EXPECT_EQ(oneway(0, 7, 0, 70).names(), "BR_NOOP BR_TRANSACTION_PENDING_FROZEN");
  binder_frozen_status_info info = frozen_info(kSm);
  EXPECT_EQ(info.async_recv, 1u);
  EXPECT_EQ(info.sync_recv, 2u);
  ASSERT_EQ(freeze(kSm, false), 0);
  info = frozen_info(kSm);
  EXPECT_EQ(info.async_recv, 0u);
  EXPECT_EQ(info.sync_recv, 2u) << "still pending until read";
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(tr.code, 7u);
  EXPECT_EQ(u32_at(tr), 70u);
  EXPECT_EQ(frozen_info(kSm).sync_recv, 0u);
}

// S2.10: with timeout 0 a proc with an undelivered call, or a thread in the middle of one, cannot
// be frozen: EAGAIN, and it is left thawed.
TEST_F(FreezeTest, BusyProcFreezeIsEagainAndThawed_S2_10) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(freeze(kSm, true), -EAGAIN) << "undelivered";
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(freeze(kSm, true), -EAGAIN) << "being served";
  EXPECT_EQ(freeze(kClient, true), -EAGAIN) << "the caller waits for its reply";
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
  EXPECT_EQ(freeze(kSm, true), 0);
  EXPECT_EQ(freeze(kClient, true), 0);
}

// S2.10: the wait ends as soon as the outstanding transactions drain; then the freeze succeeds.
TEST_F(FreezeTest, FreezeWaitsForDrain_S2_10) {
  ASSERT_EQ(oneway(0, 1, 0, 1).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  Call freezing = freeze_async(kSm, 60'000);
  EXPECT_FALSE(freezing.done());
  // Frozen already while it waits: a sync call is refused.
  EXPECT_EQ(client.write_read(kClientOther, Commands().transaction(0, 2, 0)).names(),
            "BR_NOOP BR_FROZEN_REPLY");
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  freezing.wait();
  EXPECT_EQ(freezing.result(), 0);
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));
  EXPECT_EQ(oneway(0, 3, 0, 3).names(), "BR_NOOP BR_TRANSACTION_PENDING_FROZEN");
}

// S2.10: still busy when the timeout expires -> EAGAIN, thawed.
TEST_F(FreezeTest, FreezeTimeoutIsEagain_S2_10) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  Call freezing = freeze_async(kSm, 30);
  freezing.wait();
  EXPECT_EQ(freezing.result(), -EAGAIN);
  EXPECT_EQ(read_now(sm, kSmLooper).tr().code, 1u) << "thawed: the call is still served";
  EXPECT_EQ(frozen_info(kSm).sync_recv, 2u);
}

// S2.10: the deadline is timeout_ms after the ioctl, not before: the proc stays frozen (and the
// ioctl parked) until the timer reaches it.
TEST_F(FreezeTest, FreezeTimeoutEndsAtTheDeadline_S2_10) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  Call freezing = freeze_async(kSm, 30);
  env.timer.advance(std::chrono::milliseconds(29));
  EXPECT_FALSE(freezing.done());
  EXPECT_EQ(frozen_info(kSm).sync_recv, 2u) << "still pending";
  env.timer.advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(freezing.done());
  EXPECT_EQ(freezing.result(), -EAGAIN);
  EXPECT_EQ(read_now(sm, kSmLooper).tr().code, 1u) << "thawed";
}

// S2.10: a signal during the wait fails the ioctl (EINTR) and thaws the proc.
TEST_F(FreezeTest, InterruptedWaitIsEintrAndThaws_S2_10) {
  ASSERT_EQ(oneway(0, 1, 0, 1).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  Call freezing = freeze_async(kSm, 60'000);
  ASSERT_FALSE(freezing.done());
  freezer.interrupt(kFreezerMain, freezing);
  ASSERT_TRUE(freezing.done());
  EXPECT_EQ(freezing.result(), -EINTR);
  EXPECT_EQ(oneway(0, 2, 0, 2).names(), "BR_NOOP BR_TRANSACTION_COMPLETE") << "thawed";
}

// S2.10 / S2.11: every proc of the pid counts: a busy second proc (its thread waits for a reply)
// fails the freeze; once it is idle both are frozen, and the info ORs over them.
TEST_F(FreezeTest, FreezesEveryProcOfThePid_S2_10_S2_11) {
  std::uint32_t handle = server_handle();
  Client second{env, kServer};
  warm(second, kServerOther);
  Call call = second.write_read(kServerOther, Commands().transaction(0, 1, 0));
  binder_transaction_data tr = read_now(sm, kSmOther).tr();
  EXPECT_EQ(freeze(kServer, true), -EAGAIN);
  EXPECT_EQ(frozen_info(kServer).sync_recv, 2u) << "pending in the second proc";
  write_ok(sm, kSmOther, Commands().free_buffer(tr.data.ptr.buffer).reply());
  ASSERT_TRUE(call.done());
  ASSERT_EQ(freeze(kServer, true), 0);
  EXPECT_EQ(oneway(handle, 1, 0, 1).names(), "BR_NOOP BR_TRANSACTION_PENDING_FROZEN");
  EXPECT_EQ(frozen_info(kServer).async_recv, 1u) << "from the first proc";
  ASSERT_EQ(freeze(kServer, false), 0);
  EXPECT_EQ(frozen_info(kServer).async_recv, 0u);
}

// S4.13 TF_UPDATE_TXN: for a frozen proc, a oneway with TF_ONE_WAY|TF_UPDATE_TXN replaces an
// older one with the same code and flags from the same sender still waiting in the node's async
// queue; the replaced one's buffer is freed. The one already past the queue is never replaced.
TEST_F(FreezeTest, UpdateTxnSupersedesQueuedOneway_S4_13) {
  ASSERT_EQ(freeze(kSm, true), 0);
  for (std::uint32_t value : {1u, 2u, 3u, 4u})
    ASSERT_EQ(oneway(0, 5, TF_UPDATE_TXN, value).names(), "BR_NOOP BR_TRANSACTION_PENDING_FROZEN");
  EXPECT_EQ(sm.proc().counts().buffers, 2u) << "the in-flight one and the latest";
  ASSERT_EQ(oneway(0, 6, TF_UPDATE_TXN, 60).names(), "BR_NOOP BR_TRANSACTION_PENDING_FROZEN");
  ASSERT_EQ(oneway(0, 5, 0, 50).names(), "BR_NOOP BR_TRANSACTION_PENDING_FROZEN");
  EXPECT_EQ(sm.proc().counts().buffers, 4u) << "other code or flags: not replaced";
  ASSERT_EQ(freeze(kSm, false), 0);
  std::vector<std::uint32_t> seen;
  for (int i = 0; i < 4; i++) {
    binder_transaction_data tr = read_now(sm, kSmLooper).tr();
    seen.push_back(u32_at(tr));
    write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));
  }
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{1, 4, 60, 50}));
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
  EXPECT_EQ(frozen_info(kSm).sync_recv, 0u) << "nothing outstanding";
}

// S4.13: TF_UPDATE_TXN does nothing for a proc that is not frozen.
TEST_F(FreezeTest, UpdateTxnOnlyWhenFrozen_S4_13) {
  for (std::uint32_t value : {1u, 2u, 3u})
    ASSERT_EQ(oneway(0, 5, TF_UPDATE_TXN, value).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(sm.proc().counts().buffers, 3u);
}

// S4.13: replies are never blocked by freezing.
TEST_F(FreezeTest, ReplyReachesFrozenCaller_S4_13) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  // The client waits for a reply, so only the manager can be frozen; freeze it afterwards too.
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply(0, Parcel().u32(9)));
  ASSERT_TRUE(call.done());
  EXPECT_EQ(u32_at(call.tr()), 9u);
}

}  // namespace
}  // namespace cused::core::test
