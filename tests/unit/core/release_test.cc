// SPDX-License-Identifier: GPL-2.0-only
// core/release.cc: teardown: BINDER_THREAD_EXIT (S2.6) and the release of a whole proc (S1.9),
// and what each does to the calls, oneways, refs, registrations and reads in flight.
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using ReleaseTest = World;

// S2.6: after BINDER_THREAD_EXIT the tid is a new thread with fresh looper state.
TEST_F(ReleaseTest, ThreadExitForgetsTheThread_S2_6) {
  write_ok(sm, kSmOther, Commands().u32(BC_ENTER_LOOPER));
  EXPECT_EQ(sm.ioctl(kSmOther, BINDER_THREAD_EXIT), 0);
  EXPECT_FALSE(sm.proc().thread_looper(kSmOther));
  warm(sm, kSmOther);
  EXPECT_EQ(sm.proc().thread_looper(kSmOther), 0u);
}

// S2.6 / S4.6: a thread exits while its own nested call is out: the call loses its sender, the
// incoming call it was serving loses its receiver, and when the nested reply comes back it fails
// down the chain to the thread waiting on the incoming call.
TEST_F(ReleaseTest, ReplyToExitedThreadFailsDownTheChain_S2_6) {
  std::uint32_t handle = publish();
  Call outer = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  read_now(sm, kSmLooper);
  Call nested = sm.write_read(kSmLooper, Commands().transaction(handle, 2, 0));
  ASSERT_FALSE(nested.done());
  binder_transaction_data at_server = read_now(server, kServerLooper).tr();
  EXPECT_EQ(sm.ioctl(kSmLooper, BINDER_THREAD_EXIT), 0);
  EXPECT_FALSE(outer.done()) << "the exiting thread's top call was its own outgoing one";
  Call replied =
      server.write_read(kServerLooper, Commands().free_buffer(at_server.data.ptr.buffer).reply());
  EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  ASSERT_TRUE(outer.done());
  EXPECT_EQ(outer.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_DEAD_REPLY");
}

// S1.9: releasing the manager clears the context's manager slot; handle 0 is then dead.
TEST_F(ReleaseTest, ManagerReleaseClearsContext_S1_9) {
  sm.release();
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(call.names(), "BR_NOOP BR_DEAD_REPLY");
  Client next{env, 400};
  EXPECT_EQ(next.ioctl(401, BINDER_SET_CONTEXT_MGR), 0);
}

// S1.9: ioctls on a released proc find no thread.
TEST_F(ReleaseTest, ReleasedProcRefusesIoctls_S1_9) {
  client.release();
  binder_version version{};
  EXPECT_EQ(client.ioctl(kClientMain, BINDER_VERSION, version), -EBADF);
}

// S1.9 with everything in flight: calls, refs both ways, registrations, parked reads. Nothing may
// stay behind (ASan's leak check covers reference cycles), and the survivors keep working.
TEST_F(ReleaseTest, ReleaseWithEverythingInFlight_S1_9) {
  std::uint32_t handle = fetch(publish());
  write_ok(client, kClientMain, Commands().death(BC_REQUEST_DEATH_NOTIFICATION, handle, 0x1));
  Call parked = server.read(kServerOther);
  Call call = client.write_read(kClientMain, Commands().transaction(handle, 1, 0));
  Call oneway = client.write_read(kClientOther, Commands().transaction(handle, 2, TF_ONE_WAY));
  server.release();
  EXPECT_TRUE(call.done());
  EXPECT_TRUE(parked.done());
  EXPECT_EQ(env.driver->proc_count(), 2u);
  Call death = read_now(client, kClientOther);
  EXPECT_EQ(death.names(), "BR_NOOP BR_DEAD_BINDER");
  client.release();
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
  EXPECT_EQ(sm.proc().counts().refs, 1u) << "the manager's ref to the dead node";
}

// S1.9: releasing one thread can wake another before that one's own release: here the first
// thread's undelivered oneway is freed, which moves the node's next oneway to the proc queue and
// wakes the second thread's read. That read runs after the release; it must end, not park again
// on a thread nobody will ever release (found by tests/fuzz, docs/reliability.md).
TEST_F(ReleaseTest, ReadWokenDuringReleaseEndsAfterIt_S1_9) {
  std::uint32_t handle = fetch(publish());
  write_ok(server, kServerLooper, Commands().u32(BC_ENTER_LOOPER));
  write_ok(server, kServerOther, Commands().u32(BC_ENTER_LOOPER));
  Call other = server.read(kServerOther);
  // Too small for a transaction: the first oneway stays on the looper's own queue.
  Call looper = server.read(kServerLooper, 8);
  ASSERT_FALSE(other.done());
  write_ok(client, kClientMain, Commands().transaction(handle, 1, TF_ONE_WAY));
  ASSERT_TRUE(looper.done());
  EXPECT_EQ(looper.names(), "BR_NOOP");
  write_ok(client, kClientMain, Commands().transaction(handle, 2, TF_ONE_WAY));
  ASSERT_FALSE(other.done()) << "the second oneway waits behind the first on the node";
  server.release();
  ASSERT_TRUE(other.done());
  EXPECT_EQ(other.result(), 0);
  EXPECT_EQ(other.names(), "BR_NOOP");
}

// S3.6 "target dies while the call is queued": release turns it into BR_DEAD_REPLY (S1.9).
TEST_F(ReleaseTest, CallQueuedToReleasedProcGetsDeadReply_S1_9) {
  std::uint32_t handle = fetch(publish());
  Call call = client.write_read(kClientMain, Commands().transaction(handle, 1, 0));
  ASSERT_FALSE(call.done());
  server.release();
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_DEAD_REPLY");
  // S6.8: the node is dead now: a new call is BR_DEAD_REPLY at once.
  Call again = client.write_read(kClientMain, Commands().transaction(handle, 1, 0));
  EXPECT_EQ(again.names(), "BR_NOOP BR_DEAD_REPLY");
}

// S3.6 "target dies while serving": the serving thread's release fails the call (S2.6, S1.9).
TEST_F(ReleaseTest, CallBeingServedByExitingThreadGetsDeadReply_S2_6) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  read_now(sm, kSmLooper);
  ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_THREAD_EXIT), 0);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_DEAD_REPLY");
  // The next ioctl of that tid is a brand-new thread: its first read returns at once.
  EXPECT_EQ(read_now(sm, kSmLooper).names(), "BR_NOOP");
}

// S2.6 / S11.7: a poll waiter does not outlive its thread; it is told to look again.
TEST_F(ReleaseTest, ThreadExitNotifiesPollWaiter_S2_6) {
  auto count = std::make_shared<int>(0);
  client.proc().poll(kClientMain, std::make_unique<CountingWaiter>(count));
  EXPECT_EQ(client.ioctl(kClientMain, BINDER_THREAD_EXIT), 0);
  EXPECT_EQ(*count, 1);
}

// S1.9 step 5: oneways waiting in a dying node's async queue are dropped silently.
TEST_F(ReleaseTest, ReleaseDropsQueuedOneways_S1_9) {
  std::uint32_t handle = fetch(publish());
  for (std::uint32_t code = 1; code <= 3; code++) {
    Call sent = client.write_read(kClientMain, Commands().transaction(handle, code, TF_ONE_WAY));
    ASSERT_EQ(sent.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  }
  server.release();
  EXPECT_FALSE(client.read(kClientMain).done()) << "the senders hear nothing more";
  EXPECT_EQ(client.proc().counts().todo, 0u);
}

}  // namespace
}  // namespace cused::core::test
