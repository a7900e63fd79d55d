// Looper state and the thread pool (S8), poll (S1.10), thread exit (S2.6) and proc release (S1.9).
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using LifecycleTest = World;

// S1.10: a new thread polls readable; an idle one does not; proc work with nobody waiting in a
// read notifies idle poll threads and makes them readable.
TEST_F(LifecycleTest, PollReportsWorkAndNotifiesIdlePollers_S1_10) {
  auto count = std::make_shared<int>(0);
  EXPECT_EQ(sm.proc().poll(150, std::make_unique<CountingWaiter>(count)), kPollIn);
  EXPECT_EQ(sm.proc().poll(kSmOther, std::make_unique<CountingWaiter>(count)), 0u);
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  EXPECT_GE(*count, 1);
  EXPECT_EQ(sm.proc().poll(kSmOther, nullptr), kPollIn);
  EXPECT_EQ(read_now(sm, kSmOther).names(), "BR_NOOP BR_TRANSACTION");
}

// S1.10: a deferred completion does not make the fd readable.
TEST_F(LifecycleTest, DeferredCompleteIsNotPollIn_S1_10) {
  write_ok(client, kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(client.proc().poll(kClientMain, nullptr), 0u);
}

// S8.2 / S8.3 / S8.4: looper flags.
TEST_F(LifecycleTest, LooperStateTransitions_S8) {
  write_ok(sm, kSmLooper, Commands().u32(BC_REGISTER_LOOPER));  // no spawn request: invalid
  EXPECT_EQ(sm.proc().thread_looper(kSmLooper), kLooperRegistered | kLooperInvalid);
  write_ok(sm, kSmOther, Commands().u32(BC_ENTER_LOOPER).u32(BC_EXIT_LOOPER));
  EXPECT_EQ(sm.proc().thread_looper(kSmOther), kLooperEntered | kLooperExited);
  write_ok(client, kClientMain, Commands().u32(BC_ENTER_LOOPER).u32(BC_REGISTER_LOOPER));
  EXPECT_EQ(client.proc().thread_looper(kClientMain),
            kLooperEntered | kLooperRegistered | kLooperInvalid);
  Call waiting = sm.read(kSmOther);
  EXPECT_EQ(sm.proc().thread_looper(kSmOther), kLooperEntered | kLooperExited | kLooperWaiting);
  sm.proc().flush();
  EXPECT_TRUE(waiting.done());
}

// S2.6: after BINDER_THREAD_EXIT the tid is a new thread with fresh looper state.
TEST_F(LifecycleTest, ThreadExitForgetsTheThread_S2_6) {
  write_ok(sm, kSmOther, Commands().u32(BC_ENTER_LOOPER));
  EXPECT_EQ(sm.ioctl(kSmOther, BINDER_THREAD_EXIT), 0);
  EXPECT_FALSE(sm.proc().thread_looper(kSmOther));
  warm(sm, kSmOther);
  EXPECT_EQ(sm.proc().thread_looper(kSmOther), 0u);
}

// S2.6 / S4.6: a thread exits while its own nested call is out: the call loses its sender, the
// incoming call it was serving loses its receiver, and when the nested reply comes back it fails
// down the chain to the thread waiting on the incoming call.
TEST_F(LifecycleTest, ReplyToExitedThreadFailsDownTheChain_S2_6) {
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
TEST_F(LifecycleTest, ManagerReleaseClearsContext_S1_9) {
  sm.release();
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(call.names(), "BR_NOOP BR_DEAD_REPLY");
  Client next{env, 400};
  EXPECT_EQ(next.ioctl(401, BINDER_SET_CONTEXT_MGR), 0);
}

// S1.9 step 1 / S2.10: the driver's list of procs (every device) loses a proc at release.
TEST_F(LifecycleTest, DriverListsLiveProcsByPid_S1_9) {
  Env other_device_env;  // a second driver: its procs are not ours
  Client second_open{env, kClient};
  EXPECT_EQ(env.driver->procs_of(kClient).size(), 2u);
  EXPECT_EQ(env.driver->proc_count(), 4u);
  client.release();
  EXPECT_EQ(env.driver->procs_of(kClient).size(), 1u);
  EXPECT_TRUE(other_device_env.driver->procs_of(kClient).empty());
}

// S1.9: ioctls on a released proc find no thread.
TEST_F(LifecycleTest, ReleasedProcRefusesIoctls_S1_9) {
  client.release();
  binder_version version{};
  EXPECT_EQ(client.ioctl(kClientMain, BINDER_VERSION, version), -EBADF);
}

// S1.9 with everything in flight: calls, refs both ways, registrations, parked reads. Nothing may
// stay behind (ASan's leak check covers reference cycles), and the survivors keep working.
TEST_F(LifecycleTest, ReleaseWithEverythingInFlight_S1_9) {
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
TEST_F(LifecycleTest, ReadWokenDuringReleaseEndsAfterIt_S1_9) {
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

}  // namespace
}  // namespace cused::core::test
