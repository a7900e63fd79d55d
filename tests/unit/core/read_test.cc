// SPDX-License-Identifier: GPL-2.0-only
// core/read.cc: the read half of BINDER_WRITE_READ (S3.2, binder_thread_read): what one read
// returns and when, BR_SPAWN_LOOPER (S3.3), the sender's identity filled in at delivery (S4.8),
// non-blocking reads (S1.11), interrupts (S1.12), flush (S1.8) and poll (S1.10).
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using ReadTest = World;

// S3.2 step 4: less than 76 bytes left ends the read, even for a 4-byte item.
TEST_F(ReadTest, ShortReadBufferReturnsOnlyNoop_S3_2) {
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));  // queues work
  Call small = sm.read(kSmLooper, 79);
  ASSERT_TRUE(small.done());
  EXPECT_EQ(small.names(), "BR_NOOP");
  Call enough = sm.read(kSmLooper, 80);
  EXPECT_EQ(enough.names(), "BR_NOOP BR_TRANSACTION");
}

// S3.2 step 6: at most one transaction per read.
TEST_F(ReadTest, OneTransactionPerRead_S3_2) {
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  client.write_read(kClientOther, Commands().transaction(0, 2, 0));
  Call first = sm.read(kSmLooper, 1024);
  EXPECT_EQ(first.names(), "BR_NOOP BR_TRANSACTION");
  Call second = sm.read(kSmOther, 1024);
  EXPECT_EQ(second.names(), "BR_NOOP BR_TRANSACTION");
}

// S1.11: a non-blocking read without work fails with EAGAIN and leaves read_consumed alone.
TEST_F(ReadTest, NonblockingReadWithoutWorkIsEagain_S1_11) {
  Call call = sm.read(kSmLooper, 256, /*nonblock=*/true);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), -EAGAIN);
  EXPECT_EQ(call.bwr().read_consumed, 0u);
}

// S1.12: an interrupted parked read fails with EINTR; the write half was applied and reported.
TEST_F(ReadTest, InterruptedReadIsEintrAfterWrite_S1_12) {
  Call call = sm.write_read(kSmLooper, Commands().u32(BC_ENTER_LOOPER));
  ASSERT_FALSE(call.done());
  sm.interrupt(kSmLooper, call);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), -EINTR);
  EXPECT_EQ(call.bwr().write_consumed, 4u);
  EXPECT_EQ(call.bwr().read_consumed, 0u);
  // The interrupted thread is no longer waiting: work goes elsewhere, to the proc queue.
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  EXPECT_EQ(read_now(sm, kSmOther).names(), "BR_NOOP BR_TRANSACTION");
}

// S1.8: flush wakes parked readers, which return BR_NOOP only.
TEST_F(ReadTest, FlushWakesReadersWithNoop_S1_8) {
  Call call = sm.read(kSmLooper);
  ASSERT_FALSE(call.done());
  sm.proc().flush();
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), 0);
  EXPECT_EQ(call.names(), "BR_NOOP");
  EXPECT_FALSE(sm.read(kSmLooper).done()) << "need_return was cleared by the ioctl's end";
}

// S3.3 / S8.2 / S8.5: BR_SPAWN_LOOPER replaces the leading BR_NOOP when no thread waits for
// proc work, the pool is below max_threads and the reader is a looper; one request at a time.
TEST_F(ReadTest, SpawnLooperRules_S3_3) {
  std::uint32_t max = 2;
  ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_SET_MAX_THREADS, max), 0);
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  Call first = read_now(sm, kSmLooper);
  EXPECT_EQ(first.names(), "BR_NOOP BR_TRANSACTION") << "not a looper yet";
  write_ok(sm, kSmLooper, Commands().u32(BC_ENTER_LOOPER).free_buffer(first.tr().data.ptr.buffer));
  client.write_read(kClientMain, Commands().transaction(0, 2, TF_ONE_WAY));
  Call second = read_now(sm, kSmLooper);
  EXPECT_EQ(second.names(), "BR_SPAWN_LOOPER BR_TRANSACTION");
  EXPECT_EQ(sm.proc().counts().requested_threads, 1u);
  write_ok(sm, kSmLooper, Commands().free_buffer(second.tr().data.ptr.buffer));
  client.write_read(kClientMain, Commands().transaction(0, 3, TF_ONE_WAY));
  EXPECT_EQ(read_now(sm, kSmLooper).names(), "BR_NOOP BR_TRANSACTION")
      << "a request is outstanding";
  write_ok(sm, kSmOther, Commands().u32(BC_REGISTER_LOOPER));
  EXPECT_EQ(sm.proc().counts().requested_threads, 0u);
  EXPECT_EQ(sm.proc().counts().requested_threads_started, 1u);
}

// S3.3: no BR_SPAWN_LOOPER while another thread waits for proc work; once nobody waits, even
// a read that returns nothing else asks for one.
TEST_F(ReadTest, NoSpawnWhileAThreadWaits_S3_3) {
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
TEST_F(ReadTest, PollThreadQueuingToItselfIsWoken_S1_10) {
  auto count = std::make_shared<int>(0);
  EXPECT_EQ(client.proc().poll(kClientMain, std::make_unique<CountingWaiter>(count)), 0u);
  write_ok(client, kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  EXPECT_EQ(*count, 1);
  EXPECT_EQ(client.proc().poll(kClientMain, nullptr), kPollIn);
}

// S4.8: sender_pid is 0 once the sending thread is gone; the reply then only completes (S4.6).
TEST_F(ReadTest, SenderPidZeroWhenSenderThreadExited_S4_8) {
  write_ok(client, kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(client.ioctl(kClientMain, BINDER_THREAD_EXIT), 0);
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(tr.sender_pid, 0);
  EXPECT_EQ(tr.flags & TF_ONE_WAY, 0u);
  Call replied = sm.write_read(kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
  EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
}

// S1.10: a new thread polls readable; an idle one does not; proc work with nobody waiting in a
// read notifies idle poll threads and makes them readable.
TEST_F(ReadTest, PollReportsWorkAndNotifiesIdlePollers_S1_10) {
  auto count = std::make_shared<int>(0);
  EXPECT_EQ(sm.proc().poll(150, std::make_unique<CountingWaiter>(count)), kPollIn);
  EXPECT_EQ(sm.proc().poll(kSmOther, std::make_unique<CountingWaiter>(count)), 0u);
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  EXPECT_GE(*count, 1);
  EXPECT_EQ(sm.proc().poll(kSmOther, nullptr), kPollIn);
  EXPECT_EQ(read_now(sm, kSmOther).names(), "BR_NOOP BR_TRANSACTION");
}

// S1.10: a deferred completion does not make the fd readable.
TEST_F(ReadTest, DeferredCompleteIsNotPollIn_S1_10) {
  write_ok(client, kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(client.proc().poll(kClientMain, nullptr), 0u);
}

// S2.0: a new thread's first read returns at once, with whatever its queue holds (here the
// deferred completion of the call it just made).
TEST_F(ReadTest, NewThreadReadReturnsAtOnce_S2_0) {
  Call call = client.write_read(kClientMain + 10, Commands().transaction(0, 1, 0));
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  Call wait = client.read(kClientMain + 10);
  EXPECT_FALSE(wait.done());
}

}  // namespace
}  // namespace cused::core::test
