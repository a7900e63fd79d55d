// Transactions and replies through the engine (S3, S4), each test naming the spec ids it checks.
#include <gtest/gtest.h>

#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

constexpr pid_t kSm = 100, kSmLooper = 101;
constexpr pid_t kClient = 200, kClientMain = 201, kClientOther = 202;

std::uint32_t u32_at(const binder_transaction_data& tr, binder_size_t offset = 0) {
  return object_at<std::uint32_t>(tr, offset);
}

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

// S2.0: a new thread's first read returns at once, with whatever its queue holds (here the
// deferred completion of the call it just made).
TEST_F(TransactionTest, NewThreadReadReturnsAtOnce_S2_0) {
  Call call = client.write_read(kClientMain + 10, Commands().transaction(0, 1, 0));
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  Call wait = client.read(kClientMain + 10);
  EXPECT_FALSE(wait.done());
}

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

// S3.2 step 3: a read without work parks and the sender's write completes it (no daemon thread
// waits); S3.4: the waiting thread gets the transaction.
TEST_F(TransactionTest, ParkedReaderIsCompletedBySender_S3_2) {
  Call waiting = sm.read(kSmLooper);
  ASSERT_FALSE(waiting.done());
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  ASSERT_TRUE(waiting.done());
  EXPECT_EQ(waiting.names(), "BR_NOOP BR_TRANSACTION");
  EXPECT_FALSE(call.done());
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

// S3.1: processing stops after a failed transaction; the remaining commands stay unconsumed.
TEST_F(TransactionTest, WriteStopsAfterFailedTransaction_S3_1) {
  Commands commands = Commands().transaction(9, 1, 0);
  const std::size_t first = commands.bytes.size();
  commands.u32(BC_ENTER_LOOPER);
  Call call = client.write_read(kClientMain, commands);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), 0);
  EXPECT_EQ(call.bwr().write_consumed, first);
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

}  // namespace
}  // namespace cused::core::test
