// Finer points of thread choice, poll, sender identity, oneway spam and teardown.
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using DetailTest = World;

// S4.4 / S3.2 step 3: the thread that most recently started waiting for proc work gets it.
TEST_F(DetailTest, MostRecentWaiterGetsProcWork_S4_4) {
  Call first = sm.read(kSmLooper);
  Call second = sm.read(kSmOther);
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  EXPECT_FALSE(first.done());
  ASSERT_TRUE(second.done());
  EXPECT_EQ(second.names(), "BR_NOOP BR_TRANSACTION");
  client.write_read(kClientMain, Commands().transaction(0, 2, 0));
  ASSERT_TRUE(first.done());
  EXPECT_EQ(first.tr().code, 2u);
}

// S3.3: no BR_SPAWN_LOOPER while another thread waits for proc work; once nobody waits, even
// a read that returns nothing else asks for one.
TEST_F(DetailTest, NoSpawnWhileAThreadWaits_S3_3) {
  std::uint32_t handle = publish();
  std::uint32_t max = 4;
  ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_SET_MAX_THREADS, max), 0);
  write_ok(sm, kSmLooper, Commands().u32(BC_ENTER_LOOPER));
  write_ok(sm, kSmOther, Commands().u32(BC_ENTER_LOOPER));
  Call idle = sm.read(kSmOther);
  ASSERT_FALSE(idle.done());
  Call busy = sm.write_read(kSmLooper, Commands().transaction(handle, 1, TF_ONE_WAY));
  EXPECT_EQ(busy.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  sm.proc().flush();
  ASSERT_TRUE(idle.done());
  EXPECT_EQ(idle.names(), "BR_SPAWN_LOOPER");
}

// S1.10: a poll thread that queues work to itself is woken for it.
TEST_F(DetailTest, PollThreadQueuingToItselfIsWoken_S1_10) {
  auto count = std::make_shared<int>(0);
  EXPECT_EQ(client.proc().poll(kClientMain, std::make_unique<CountingWaiter>(count)), 0u);
  write_ok(client, kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  EXPECT_EQ(*count, 1);
  EXPECT_EQ(client.proc().poll(kClientMain, nullptr), kPollIn);
}

// S2.6 / S11.7: a poll waiter does not outlive its thread; it is told to look again.
TEST_F(DetailTest, ThreadExitNotifiesPollWaiter_S2_6) {
  auto count = std::make_shared<int>(0);
  client.proc().poll(kClientMain, std::make_unique<CountingWaiter>(count));
  EXPECT_EQ(client.ioctl(kClientMain, BINDER_THREAD_EXIT), 0);
  EXPECT_EQ(*count, 1);
}

// S4.8: sender_pid is 0 once the sending thread is gone; the reply then only completes (S4.6).
TEST_F(DetailTest, SenderPidZeroWhenSenderThreadExited_S4_8) {
  write_ok(client, kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(client.ioctl(kClientMain, BINDER_THREAD_EXIT), 0);
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(tr.sender_pid, 0);
  EXPECT_EQ(tr.flags & TF_ONE_WAY, 0u);
  Call replied = sm.write_read(kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
  EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
}

// S2.12 / S9.7: a sender filling the async budget with its oneways is flagged once, with
// BR_ONEWAY_SPAM_SUSPECT instead of the completion only when it enabled detection; the oneway is
// delivered either way.
TEST_F(DetailTest, OnewaySpamSuspectOnlyWhenEnabled_S9_7) {
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

// S1.9 step 5: oneways waiting in a dying node's async queue are dropped silently.
TEST_F(DetailTest, ReleaseDropsQueuedOneways_S1_9) {
  std::uint32_t handle = fetch(publish());
  for (std::uint32_t code = 1; code <= 3; code++) {
    Call sent = client.write_read(kClientMain, Commands().transaction(handle, code, TF_ONE_WAY));
    ASSERT_EQ(sent.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  }
  server.release();
  EXPECT_FALSE(client.read(kClientMain).done()) << "the senders hear nothing more";
  EXPECT_EQ(client.proc().counts().todo, 0u);
}

// S4.6 / S2.14: a reply that fails to translate is recorded for the caller, not the replier.
TEST_F(DetailTest, BadReplyObjectsFailTheCaller_S4_6) {
  expect_reply_failure(Parcel().handle(55), BR_FAILED_REPLY, -EINVAL);
}

// S4.3: a sync call from a thread whose queue starts with an incoming transaction is refused.
// The transaction stays queued when the woken read is too small to take it (S3.2 step 4).
TEST_F(DetailTest, CallWithIncomingTransactionQueuedIsRefused_S4_3) {
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
