// SPDX-License-Identifier: GPL-2.0-only
// core/death.cc: death notifications (S7.1-S7.5): registration, delivery, clearing and the
// clear-vs-death race.
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using DeathTest = World;

// S7.2 / S7.3: a registered holder gets BR_DEAD_BINDER (ending the read) when the owner goes,
// and BC_DEAD_BINDER_DONE acknowledges it.
TEST_F(DeathTest, OwnerReleaseDeliversDeadBinder_S7_2) {
  std::uint32_t handle = fetch(publish());
  write_ok(client, kClientMain, Commands().death(BC_REQUEST_DEATH_NOTIFICATION, handle, 0x77));
  Call waiting = client.read(kClientOther);
  ASSERT_FALSE(waiting.done());
  server.release();
  ASSERT_TRUE(waiting.done());
  EXPECT_EQ(waiting.names(), "BR_NOOP BR_DEAD_BINDER");
  EXPECT_EQ(waiting.items()[1].cookie(), 0x77u);
  EXPECT_EQ(client.proc().counts().delivered_deaths, 1u);
  write_ok(client, kClientOther, Commands().dead_binder_done(0x77));
  EXPECT_EQ(client.proc().counts().delivered_deaths, 0u);
}

// S7.1: a registration on a dead node fires at once; a second registration is ignored.
TEST_F(DeathTest, RegistrationOnDeadNodeFiresAtOnce_S7_1) {
  std::uint32_t handle = fetch(publish());
  server.release();
  write_ok(client, kClientMain,
           Commands()
               .death(BC_REQUEST_DEATH_NOTIFICATION, handle, 0x1)
               .death(BC_REQUEST_DEATH_NOTIFICATION, handle, 0x2));
  Call call = read_now(client, kClientMain);
  EXPECT_EQ(call.names(), "BR_NOOP BR_DEAD_BINDER");
  EXPECT_EQ(call.items()[1].cookie(), 0x1u);
  EXPECT_FALSE(client.read(kClientMain).done()) << "only one notification";
}

// S7.4: clearing before the death: CLEAR_DONE, on the thread itself when it is a looper.
TEST_F(DeathTest, ClearBeforeDeathCompletesAtOnce_S7_4) {
  std::uint32_t handle = fetch(publish());
  write_ok(client, kClientMain,
           Commands()
               .u32(BC_ENTER_LOOPER)
               .death(BC_REQUEST_DEATH_NOTIFICATION, handle, 0x5)
               .death(BC_CLEAR_DEATH_NOTIFICATION, handle, 0x6)  // cookie mismatch: ignored
               .death(BC_CLEAR_DEATH_NOTIFICATION, handle, 0x5));
  Call call = read_now(client, kClientMain);
  EXPECT_EQ(call.names(), "BR_NOOP BR_CLEAR_DEATH_NOTIFICATION_DONE");
  EXPECT_EQ(call.items()[1].cookie(), 0x5u);
  server.release();
  EXPECT_FALSE(client.read(kClientOther).done()) << "no death after the clear";
}

// S7.4: a clear racing with a queued death: the death is still delivered, CLEAR_DONE follows the
// user's BC_DEAD_BINDER_DONE.
TEST_F(DeathTest, ClearAfterQueuedDeathFollowsDeadBinderDone_S7_4) {
  std::uint32_t handle = fetch(publish());
  write_ok(client, kClientMain, Commands().death(BC_REQUEST_DEATH_NOTIFICATION, handle, 0x9));
  server.release();
  write_ok(client, kClientMain, Commands().death(BC_CLEAR_DEATH_NOTIFICATION, handle, 0x9));
  EXPECT_EQ(read_now(client, kClientMain).names(), "BR_NOOP BR_DEAD_BINDER");
  write_ok(client, kClientMain, Commands().dead_binder_done(0x9));
  Call done = read_now(client, kClientMain);
  EXPECT_EQ(done.names(), "BR_NOOP BR_CLEAR_DEATH_NOTIFICATION_DONE");
  EXPECT_EQ(done.items()[1].cookie(), 0x9u);
}

// S7.4: a clear after the death was delivered: CLEAR_DONE follows BC_DEAD_BINDER_DONE.
TEST_F(DeathTest, ClearAfterDeliveredDeathFollowsDone_S7_4) {
  std::uint32_t handle = fetch(publish());
  write_ok(client, kClientMain, Commands().death(BC_REQUEST_DEATH_NOTIFICATION, handle, 0x3));
  server.release();
  EXPECT_EQ(read_now(client, kClientMain).names(), "BR_NOOP BR_DEAD_BINDER");
  write_ok(client, kClientMain,
           Commands().death(BC_CLEAR_DEATH_NOTIFICATION, handle, 0x3).dead_binder_done(0x3));
  EXPECT_EQ(read_now(client, kClientMain).names(), "BR_NOOP BR_CLEAR_DEATH_NOTIFICATION_DONE");
}

// S7.5: dropping the ref discards its registration without a message.
TEST_F(DeathTest, RefDeletionDiscardsRegistration_S7_5) {
  std::uint32_t handle = fetch(publish());
  write_ok(client, kClientMain,
           Commands()
               .death(BC_REQUEST_DEATH_NOTIFICATION, handle, 0x4)
               .ref(BC_RELEASE, handle)
               .ref(BC_DECREFS, handle));
  EXPECT_FALSE(client.proc().ref_counts(handle));
  server.release();
  EXPECT_FALSE(client.read(kClientMain).done());
}

// S7.3: BC_DEAD_BINDER_DONE for an unknown cookie is a soft error.
TEST_F(DeathTest, DeadBinderDoneUnknownCookieIgnored_S7_3) {
  write_ok(client, kClientMain, Commands().dead_binder_done(0x1234));
}

}  // namespace
}  // namespace cused::core::test
