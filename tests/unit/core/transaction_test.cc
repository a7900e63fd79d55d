// SPDX-License-Identifier: GPL-2.0-only
// core/transaction.cc: transactions and replies (S3, S4, binder_transaction): target
// resolution (S4.1), the sender's stack rules (S4.3), the thread a call goes to (S4.4), oneway
// ordering (S4.5), failure routing (S3.6, S4.6), flags (S4.7, TF_DEFER_COMPLETE), the buffer's
// size limits (S4.10) and oneway spam (S9.7). TransactionTest is a manager and a client alone;
// TransactionFlowTest the three-proc World.
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_SET_CONTEXT_MGR), 0);
    enter_looper(sm, kSmLooper);
    // S2.0: a new thread's first ioctl never waits; real clients start with BINDER_VERSION.
    warm(client, kClientMain);
    warm(client, kClientOther);
  }
  static void warm(Client& client, pid_t tid) {
    binder_version version{};
    ASSERT_EQ(client.ioctl(tid, BINDER_VERSION, version), 0);
  }
  static void enter_looper(Client& client, pid_t tid) {
    Call call = client.write(tid, Commands().u32(BC_ENTER_LOOPER));
    ASSERT_TRUE(call.done());
    ASSERT_EQ(call.result(), 0);
  }
  // The manager reads one incoming call and returns it.
  binder_transaction_data serve(Client& server, pid_t tid) {
    Call call = server.read(tid);
    EXPECT_TRUE(call.done());
    return call.tr();
  }

  Env env;
  Client sm{env, kSm};
  Client client{env, kClient};
};

// S3.6 "sync call OK", S3.5 (deferred completion), S4.8 (sender pid/euid, reply fields).
TEST_F(TransactionTest, SyncCallDeliversTransactionThenReplyAfterDeferredComplete_S3_6) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 7, 0, Parcel().u32(42)));
  ASSERT_FALSE(call.done()) << "the caller waits for the reply: " << call.names();

  Call incoming = sm.read(kSmLooper);
  ASSERT_TRUE(incoming.done());
  EXPECT_EQ(incoming.names(), "BR_NOOP BR_TRANSACTION");
  binder_transaction_data tr = incoming.tr();
  EXPECT_EQ(tr.code, 7u);
  EXPECT_EQ(tr.flags, 0u);
  EXPECT_EQ(tr.sender_pid, kClient);
  EXPECT_EQ(tr.sender_euid, 1000u);
  EXPECT_EQ(tr.target.ptr, 0u);
  EXPECT_EQ(tr.data_size, 4u);
  EXPECT_EQ(tr.offsets_size, 0u);
  EXPECT_EQ(tr.data.ptr.offsets, tr.data.ptr.buffer + 8);
  EXPECT_EQ(u32_at(tr), 42u);

  Call replied = sm.write_read(
      kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply(0, Parcel().u32(43)));
  ASSERT_TRUE(replied.done());
  EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");

  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), 0);
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
  binder_transaction_data reply = call.tr();
  EXPECT_EQ(reply.sender_pid, 0);  // S4.8: 0 for replies
  EXPECT_EQ(reply.target.ptr, 0u);
  EXPECT_EQ(u32_at(reply), 43u);
  EXPECT_EQ(call.bwr().write_consumed, call.bwr().write_size);
  client.write(kClientMain, Commands().free_buffer(reply.data.ptr.buffer));
  EXPECT_EQ(client.proc().counts().buffers, 0u);
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
}

// S3.6 "oneway OK", S3.5 (oneway completion is immediate), S4.8 (sender_pid 0 for oneways).
TEST_F(TransactionTest, OnewayCompletesAtOnceAndArrivesWithoutSenderPid_S3_6) {
  Call sent =
      client.write_read(kClientMain, Commands().transaction(0, 3, TF_ONE_WAY, Parcel().u32(1)));
  ASSERT_TRUE(sent.done());
  EXPECT_EQ(sent.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");

  binder_transaction_data tr = serve(sm, kSmLooper);
  EXPECT_EQ(tr.flags & TF_ONE_WAY, TF_ONE_WAY);
  EXPECT_EQ(tr.sender_pid, 0);
  EXPECT_EQ(tr.code, 3u);
}

// S4.1: handle 0 without a manager is BR_DEAD_REPLY; S3.6: a send-side failure gets no
// BR_TRANSACTION_COMPLETE; S2.14: the extended error names it.
TEST(TransactionNoManager, HandleZeroWithoutManagerIsDeadReply_S4_1) {
  Env env;
  Client client{env, kClient};
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_DEAD_REPLY");
  binder_extended_error ee{};
  ASSERT_EQ(client.ioctl(kClientMain, BINDER_GET_EXTENDED_ERROR, ee), 0);
  EXPECT_EQ(ee.command, BR_DEAD_REPLY);
  EXPECT_EQ(ee.param, -EINVAL);
  EXPECT_NE(ee.id, 0u);
}

// S4.1: an unknown handle is BR_FAILED_REPLY -EINVAL.
TEST_F(TransactionTest, UnknownHandleIsFailedReply_S4_1) {
  Call call = client.write_read(kClientMain, Commands().transaction(5, 1, 0));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
  binder_extended_error ee{};
  client.ioctl(kClientMain, BINDER_GET_EXTENDED_ERROR, ee);
  EXPECT_EQ(ee.command, BR_FAILED_REPLY);
  EXPECT_EQ(ee.param, -EINVAL);
}

// S4.1: the manager's own process may not call handle 0.
TEST_F(TransactionTest, ManagerCallingHandleZeroIsFailedReply_S4_1) {
  Call call = sm.write_read(kSmLooper, Commands().transaction(0, 1, 0));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
}

// S4.6: BC_REPLY with an empty stack fails back to the replier with -EPROTO.
TEST_F(TransactionTest, ReplyWithoutIncomingCallIsFailedReply_S4_6) {
  Call call = client.write_read(kClientMain, Commands().reply());
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
  binder_extended_error ee{};
  client.ioctl(kClientMain, BINDER_GET_EXTENDED_ERROR, ee);
  EXPECT_EQ(ee.command, BR_FAILED_REPLY);
  EXPECT_EQ(ee.param, -EPROTO);
  // S2.14: reading the record resets it.
  client.ioctl(kClientMain, BINDER_GET_EXTENDED_ERROR, ee);
  EXPECT_EQ(ee.command, BR_OK);
  EXPECT_EQ(ee.id, 0u);
}

// S4.3: a thread with an outgoing call in flight cannot start another.
TEST_F(TransactionTest, SecondCallWhileWaitingIsProtocolError_S4_3) {
  Call first = client.write(kClientMain, Commands().transaction(0, 1, 0));
  ASSERT_TRUE(first.done());
  Call second = client.write_read(kClientMain, Commands().transaction(0, 2, 0));
  ASSERT_TRUE(second.done());
  // The deferred completion of the first call is returned with the failure of the second.
  EXPECT_EQ(second.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_FAILED_REPLY");
  binder_extended_error ee{};
  client.ioctl(kClientMain, BINDER_GET_EXTENDED_ERROR, ee);
  EXPECT_EQ(ee.param, -EPROTO);
}

using TransactionFlowTest = World;

// S4.4: a call made while serving goes back to the thread of the target that waits for us (the
// caller's caller), not to an idle thread of that proc.
TEST_F(TransactionFlowTest, NestedCallGoesToTheWaitingThread_S4_4) {
  std::uint32_t client_handle = 0;
  {
    // The client gives the manager a handle to its own object.
    client.write_read(kClientOther,
                      Commands().transaction(0, 1, TF_ONE_WAY, Parcel().binder(0x77, 0x78)));
    write_ok(client, kClientOther,
             Commands().done(BC_INCREFS_DONE, 0x77, 0x78).done(BC_ACQUIRE_DONE, 0x77, 0x78));
    binder_transaction_data tr = read_now(sm, kSmLooper).tr();
    client_handle = object_at<flat_binder_object>(tr, 0).handle;
    write_ok(sm, kSmLooper,
             Commands().ref(BC_ACQUIRE, client_handle).free_buffer(tr.data.ptr.buffer));
  }
  Call idle = client.read(kClientOther);  // an idle thread waiting for proc work
  ASSERT_FALSE(idle.done());
  Call outer = client.write_read(kClientMain, Commands().transaction(0, 10, 0));
  binder_transaction_data incoming = read_now(sm, kSmLooper).tr();
  ASSERT_EQ(incoming.code, 10u);

  Call nested = sm.write_read(kSmLooper, Commands().transaction(client_handle, 11, 0));
  EXPECT_FALSE(nested.done());
  ASSERT_TRUE(outer.done());
  EXPECT_EQ(outer.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_TRANSACTION");
  EXPECT_EQ(outer.tr().code, 11u);
  EXPECT_FALSE(idle.done());

  // S3.5: a reply's completion is not deferred: the replier's read returns with it.
  Call replied = client.write_read(kClientMain, Commands().reply(0, Parcel().u32(5)));
  EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  ASSERT_TRUE(nested.done());
  EXPECT_EQ(nested.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
  EXPECT_EQ(u32_at(nested.tr()), 5u);

  Call outer_reply = client.read(kClientMain);
  EXPECT_FALSE(outer_reply.done());
  write_ok(sm, kSmLooper, Commands().reply(0, Parcel().u32(6)));
  ASSERT_TRUE(outer_reply.done());
  EXPECT_EQ(outer_reply.names(), "BR_NOOP BR_REPLY");
  EXPECT_EQ(u32_at(outer_reply.tr()), 6u);
}

// S4.5: oneways to one node are delivered one at a time, FIFO, each released by the
// BC_FREE_BUFFER of the one before; a sync call overtakes them.
TEST_F(TransactionFlowTest, OnewaysToOneNodeAreSerializedByFree_S4_5) {
  for (std::uint32_t code = 1; code <= 3; code++)
    client.write_read(kClientMain, Commands().transaction(0, code, TF_ONE_WAY));
  Call sync = client.write_read(kClientOther, Commands().transaction(0, 99, 0));
  binder_transaction_data first = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(first.code, 1u);
  binder_transaction_data overtaking = read_now(sm, kSmOther).tr();
  EXPECT_EQ(overtaking.code, 99u);
  Call waiting = sm.read(kSmLooper);
  EXPECT_FALSE(waiting.done()) << "the next oneway waits for the free";
  write_ok(sm, kSmOther, Commands().free_buffer(first.data.ptr.buffer));
  ASSERT_TRUE(waiting.done());
  binder_transaction_data second = waiting.tr();
  EXPECT_EQ(second.code, 2u);
  write_ok(sm, kSmLooper, Commands().free_buffer(second.data.ptr.buffer));
  EXPECT_EQ(read_now(sm, kSmLooper).tr().code, 3u);
}

// TF_DEFER_COMPLETE: the replier's completion waits with it for the next transaction, so one
// BINDER_WRITE_READ serves the reply and the wait; deferred thread work comes before proc work.
TEST_F(TransactionFlowTest, DeferCompleteKeepsReplierWaiting_TF_DEFER_COMPLETE) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  Call served = sm.write_read(
      kSmLooper,
      Commands().free_buffer(tr.data.ptr.buffer).reply(uapi::TF_DEFER_COMPLETE, Parcel().u32(3)));
  EXPECT_FALSE(served.done()) << served.names();
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
  Call next = client.write_read(
      kClientMain, Commands().free_buffer(call.tr().data.ptr.buffer).transaction(0, 2, TF_ONE_WAY));
  ASSERT_TRUE(served.done());
  EXPECT_EQ(served.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_TRANSACTION");
  EXPECT_EQ(served.tr().code, 2u);
}

// Without the device option the flag is passed through and ignored, as the kernel does.
class NoDeferTest : public World {
 protected:
  NoDeferTest() : World(DeviceOptions{{}, /*defer_complete=*/false, nullptr}) {}
};
TEST_F(NoDeferTest, DeferCompleteIgnoredWhenDisabled_TF_DEFER_COMPLETE) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  Call served = sm.write_read(
      kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply(uapi::TF_DEFER_COMPLETE));
  ASSERT_TRUE(served.done());
  EXPECT_EQ(served.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(call.tr().flags, uapi::TF_DEFER_COMPLETE);  // S4.8: flags delivered unchanged
}

// S3.6 "reply-side failure" / S4.6 / S1.7: a reply to a caller that never mapped its space: the
// replier hears its completion, the caller BR_DEAD_REPLY with the replier's error recorded.
TEST_F(TransactionFlowTest, ReplyToUnmappedCallerIsDeadReply_S4_6) {
  client.set_mapped(false);
  expect_reply_failure(Parcel().u32(1), BR_DEAD_REPLY, -ESRCH);
}

// S1.7 / S4.10: a call to a proc that has not mapped its space is BR_DEAD_REPLY -ESRCH.
TEST_F(TransactionFlowTest, CallToUnmappedTargetIsDeadReply_S1_7) {
  sm.set_mapped(false);
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(call.names(), "BR_NOOP BR_DEAD_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -ESRCH);
}

// S4.10 / S9.6: too big for the space is -ENOSPC; a oneway also has to fit half the space.
TEST_F(TransactionFlowTest, TooBigIsFailedReplyEnospc_S4_10) {
  Parcel big;
  big.data.resize(600 * 1024);
  Call oneway = client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY, big));
  EXPECT_EQ(oneway.names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -ENOSPC);
  Call sync = client.write_read(kClientMain, Commands().transaction(0, 1, 0, big));
  EXPECT_FALSE(sync.done()) << "a sync call may use the whole space";
  Parcel huge;
  huge.data.resize(2 * 1024 * 1024);
  Call too_big = client.write_read(kClientOther, Commands().transaction(0, 1, 0, huge));
  EXPECT_EQ(too_big.names(), "BR_NOOP BR_FAILED_REPLY");
}

// S4.6: the caller released while its call is served: the replier only hears its completion.
TEST_F(TransactionFlowTest, ReplyToReleasedCallerOnlyCompletes_S4_6) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  client.release();
  Call replied = sm.write_read(kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
  EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(extended_error(sm, kSmLooper).command, BR_OK);
}

// S4.7 / S5.3: fds in a reply to a caller that did not set TF_ACCEPT_FDS: replier completes,
// caller BR_FAILED_REPLY -EPERM.
TEST_F(TransactionFlowTest, FdInReplyWithoutAcceptFdsFailsTheCaller_S4_7) {
  expect_reply_failure(Parcel().fd(1), BR_FAILED_REPLY, -EPERM);
}

// S4.7 / S9.10: TF_CLEAR_BUF zeroes the buffer when it is freed.
TEST_F(TransactionFlowTest, ClearBufZeroesOnFree_S4_7) {
  Parcel parcel;
  parcel.data.assign(64, std::byte{0xab});
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY | TF_CLEAR_BUF, parcel));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(buffer_bytes(tr), parcel.data);
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));
  EXPECT_EQ(buffer_bytes(tr), std::vector<std::byte>(64, std::byte{0}));
}

// S2.12 / S9.7: a sender filling the async budget with its oneways is flagged once, with
// BR_ONEWAY_SPAM_SUSPECT instead of the completion only when it enabled detection; the oneway is
// delivered either way.
TEST_F(TransactionFlowTest, OnewaySpamSuspectOnlyWhenEnabled_S9_7) {
  std::uint32_t enable = 1;
  ASSERT_EQ(client.ioctl(kClientMain, BINDER_ENABLE_ONEWAY_SPAM_DETECTION, enable), 0);
  Parcel parcel;
  parcel.data.resize(8 * 1024);
  int suspects = 0, sent = 0;
  for (; sent < 60; sent++) {
    Call call = client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY, parcel));
    if (call.names() == "BR_NOOP BR_ONEWAY_SPAM_SUSPECT")
      suspects++;
    else
      ASSERT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE") << sent;
  }
  EXPECT_EQ(suspects, 1);
  EXPECT_EQ(sm.proc().counts().buffers, static_cast<std::size_t>(sent));
}

// S4.6 / S2.14: a reply that fails to translate is recorded for the caller, not the replier.
TEST_F(TransactionFlowTest, BadReplyObjectsFailTheCaller_S4_6) {
  expect_reply_failure(Parcel().handle(55), BR_FAILED_REPLY, -EINVAL);
}

// S4.3: a sync call from a thread whose queue starts with an incoming transaction is refused.
// The transaction stays queued when the woken read is too small to take it (S3.2 step 4).
TEST_F(TransactionFlowTest, CallWithIncomingTransactionQueuedIsRefused_S4_3) {
  std::uint32_t handle = publish();
  Call small = sm.read(kSmOther, 64);
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  ASSERT_TRUE(small.done());
  EXPECT_EQ(small.names(), "BR_NOOP");
  Call refused = sm.write_read(kSmOther, Commands().transaction(handle, 2, 0), 64);
  EXPECT_EQ(refused.bwr().write_consumed, refused.bwr().write_size);
  binder_extended_error ee = extended_error(sm, kSmOther);
  EXPECT_EQ(ee.command, BR_FAILED_REPLY);
  EXPECT_EQ(ee.param, -EPROTO);
  // Queue order: the incoming call first (it ends the read), then the refusal.
  EXPECT_EQ(read_now(sm, kSmOther, 256).names(), "BR_NOOP BR_TRANSACTION");
  EXPECT_EQ(read_now(sm, kSmOther, 256).names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_FALSE(call.done());
}

}  // namespace
}  // namespace cused::core::test
