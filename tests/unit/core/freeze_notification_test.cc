// SPDX-License-Identifier: GPL-2.0-only
// core/freeze_notification.cc: freeze notifications (S7.6-S7.9) and their teardown races (S11.13).
#include <gtest/gtest.h>

#include <thread>

#include "core/debug_print.h"
#include "tests/unit/core/freezer.h"

namespace cused::core::test {
namespace {

using FreezeNotificationTest = FreezeWorld;

// S7.6: a registration hears the owner's current state at once; unknown handle and a second
// registration on the same ref are hard errors (EINVAL, write_consumed at the command).
TEST_F(FreezeNotificationTest, RequestReportsCurrentStateAndErrors_S7_6) {
  std::uint32_t handle = server_handle();
  ASSERT_EQ(freeze(kServer, true), 0);
  write_ok(client, kClientMain,
           Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kCookie));
  Call read = read_now(client, kClientMain);
  EXPECT_EQ(read.names(), "BR_NOOP BR_FROZEN_BINDER");
  EXPECT_EQ(frozen_state(read).cookie, kCookie);
  EXPECT_EQ(frozen_state(read).is_frozen, 1u);
  Call again = client.write(
      kClientMain, Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kCookie + 1));
  EXPECT_EQ(again.result(), -EINVAL);
  EXPECT_EQ(again.bwr().write_consumed, 0u);
  Call unknown = client.write(
      kClientMain,
      Commands().u32(BC_ENTER_LOOPER).death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, 99, kCookie));
  EXPECT_EQ(unknown.result(), -EINVAL);
  EXPECT_EQ(unknown.bwr().write_consumed, 4u);
}

// S7.7 / S7.8: freeze and thaw each send the new state once acknowledged; a change while a
// message is in flight is sent after the DONE; DONE for an unknown cookie is EINVAL.
TEST_F(FreezeNotificationTest, StateChangesAndDone_S7_7_S7_8) {
  std::uint32_t handle = server_handle();
  write_ok(client, kClientMain,
           Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kCookie));
  Call first = read_now(client, kClientMain);
  EXPECT_EQ(frozen_state(first).is_frozen, 0u);
  ASSERT_EQ(freeze(kServer, true), 0);
  EXPECT_FALSE(client.read(kClientOther).done()) << "in flight: nothing until the DONE";
  client.proc().flush();
  // S10.6: the holder's block says a BR_FROZEN_BINDER awaits its DONE; stats count the object.
  EXPECT_NE(DebugPrint::proc(*env.driver, kClient).find("  has delivered freeze binder\n"),
            std::string::npos);
  EXPECT_NE(DebugPrint::state(*env.driver).find("has delivered freeze binder"), std::string::npos);
  write_ok(client, kClientMain, Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(kCookie));
  Call frozen = read_now(client, kClientMain);
  EXPECT_EQ(frozen.names(), "BR_NOOP BR_FROZEN_BINDER");
  EXPECT_EQ(frozen_state(frozen).is_frozen, 1u);
  Call bad =
      client.write(kClientMain, Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(kCookie + 1));
  EXPECT_EQ(bad.result(), -EINVAL);
  write_ok(client, kClientMain, Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(kCookie));
  ASSERT_EQ(freeze(kServer, false), 0);
  Call thawed = read_now(client, kClientMain);
  EXPECT_EQ(frozen_state(thawed).is_frozen, 0u);
  write_ok(client, kClientMain, Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(kCookie));
  Call twice =
      client.write(kClientMain, Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(kCookie));
  EXPECT_EQ(twice.result(), -EINVAL) << "already acknowledged";
}

// S7.7: a queued, unread message just reports the latest state (coalesced).
TEST_F(FreezeNotificationTest, QueuedMessageIsCoalesced_S7_7) {
  std::uint32_t handle = server_handle();
  write_ok(client, kClientMain,
           Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kCookie));
  ASSERT_EQ(freeze(kServer, true), 0);
  Call read = read_now(client, kClientMain);
  EXPECT_EQ(read.names(), "BR_NOOP BR_FROZEN_BINDER");
  EXPECT_EQ(frozen_state(read).is_frozen, 1u);
}

// S7.9: clearing an idle registration -> CLEAR_DONE; a queued message becomes the CLEAR_DONE; an
// in-flight one is followed by CLEAR_DONE after the DONE. Bad clears are EINVAL.
TEST_F(FreezeNotificationTest, ClearInEveryState_S7_9) {
  std::uint32_t handle = server_handle();
  auto request = [&] {
    write_ok(client, kClientMain,
             Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kCookie));
  };
  auto clear = [&](binder_uintptr_t cookie = kCookie) {
    return client.write(kClientMain,
                        Commands().death(uapi::BC_CLEAR_FREEZE_NOTIFICATION, handle, cookie));
  };
  EXPECT_EQ(clear().result(), -EINVAL) << "nothing registered";
  // Queued unsent: replaced.
  request();
  EXPECT_EQ(clear(kCookie + 1).result(), -EINVAL) << "cookie mismatch";
  EXPECT_EQ(clear().result(), 0);
  EXPECT_EQ(read_now(client, kClientMain).names(), "BR_NOOP BR_CLEAR_FREEZE_NOTIFICATION_DONE");
  // In flight: after the DONE.
  request();
  EXPECT_EQ(read_now(client, kClientMain).names(), "BR_NOOP BR_FROZEN_BINDER");
  EXPECT_EQ(clear().result(), 0);
  EXPECT_FALSE(client.read(kClientOther).done());
  client.proc().flush();
  write_ok(client, kClientMain, Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(kCookie));
  Call done = read_now(client, kClientMain);
  EXPECT_EQ(done.names(), "BR_NOOP BR_CLEAR_FREEZE_NOTIFICATION_DONE");
  // Idle (acknowledged): at once.
  request();
  read_now(client, kClientMain);
  write_ok(client, kClientMain, Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(kCookie));
  EXPECT_EQ(clear().result(), 0);
  Call idle = read_now(client, kClientMain);
  EXPECT_EQ(idle.names(), "BR_NOOP BR_CLEAR_FREEZE_NOTIFICATION_DONE");
  EXPECT_EQ(idle.items()[1].cookie(), kCookie);
  ASSERT_EQ(freeze(kServer, true), 0);
  EXPECT_FALSE(client.read(kClientOther).done()) << "cleared: no more messages";
  client.proc().flush();
}

// S11.13: a registration on a dead node is silent and can still be cleared; a message queued
// before the owner died is still delivered and acknowledged.
TEST_F(FreezeNotificationTest, DeadNodeRegistration_S11_13) {
  std::uint32_t handle = server_handle();
  write_ok(client, kClientMain,
           Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kCookie));
  server.release();
  Call queued = read_now(client, kClientMain);
  EXPECT_EQ(queued.names(), "BR_NOOP BR_FROZEN_BINDER");
  write_ok(client, kClientMain,
           Commands()
               .u32(uapi::BC_FREEZE_NOTIFICATION_DONE)
               .u64(kCookie)
               .death(uapi::BC_CLEAR_FREEZE_NOTIFICATION, handle, kCookie)
               .death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kCookie + 1));
  EXPECT_EQ(read_now(client, kClientMain).names(), "BR_NOOP BR_CLEAR_FREEZE_NOTIFICATION_DONE");
  EXPECT_FALSE(client.read(kClientOther).done()) << "dead node: no state message";
  client.proc().flush();
  write_ok(client, kClientMain,
           Commands().death(uapi::BC_CLEAR_FREEZE_NOTIFICATION, handle, kCookie + 1));
  EXPECT_EQ(read_now(client, kClientMain).names(), "BR_NOOP BR_CLEAR_FREEZE_NOTIFICATION_DONE");
}

// S11.13 / S7.5: the holder dies with messages queued and delivered, the ref goes with its
// registration, the owner keeps freezing and thawing: nothing is left behind (ASan) and nobody
// else hears anything.
TEST_F(FreezeNotificationTest, HolderAndOwnerTeardownRaces_S11_13) {
  std::uint32_t handle = server_handle();
  write_ok(client, kClientMain,
           Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kCookie));
  read_now(client, kClientMain);  // delivered, never acknowledged
  for (int i = 0; i < 3; i++) {
    ASSERT_EQ(freeze(kServer, true), 0);
    ASSERT_EQ(freeze(kServer, false), 0);
  }
  // Dropping the ref silently discards the registration (S7.5).
  write_ok(client, kClientMain, Commands().ref(BC_RELEASE, handle).ref(BC_DECREFS, handle));
  ASSERT_EQ(freeze(kServer, true), 0);
  client.release();
  ASSERT_EQ(freeze(kServer, false), 0);
  server.release();
  EXPECT_EQ(freeze(kServer, true), -EINVAL) << "no proc left with that pid";
}

// S11.13: freeze/thaw loops on one thread while the holder registers, acknowledges and clears on
// another and the owner dies halfway: every registration ends in exactly one CLEAR_DONE, every
// command keeps its kernel answer, and nothing is leaked or used after free (ASan, TSan).
TEST_F(FreezeNotificationTest, FreezeLoopsRaceClearsAndOwnerDeath_S11_13) {
  std::uint32_t handle = server_handle();
  // jthread: stopped and joined on the way out, also after a failed ASSERT.
  std::jthread freezing([&](std::stop_token stop) {
    while (!stop.stop_requested()) {
      long frozen = freeze(kServer, true);
      long thawed = freeze(kServer, false);
      // 0 while the owner lives, EINVAL once it is gone (possibly between the two).
      EXPECT_TRUE(frozen == 0 || frozen == -EINVAL) << frozen;
      EXPECT_TRUE(thawed == 0 || thawed == -EINVAL) << thawed;
    }
  });
  auto clear_done_after_acks = [&](binder_uintptr_t cookie) {
    for (int spins = 0; spins < 100000; spins++) {
      Call read = client.read(kClientMain, 256, /*nonblock=*/true);
      for (const Br& item : read.items()) {
        if (item.cmd == uapi::BR_CLEAR_FREEZE_NOTIFICATION_DONE) {
          EXPECT_EQ(item.cookie(), cookie);
          return true;
        }
        if (item.cmd != uapi::BR_FROZEN_BINDER) continue;
        Call done = client.write(kClientMain,
                                 Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(cookie));
        EXPECT_EQ(done.result(), 0);
      }
    }
    return false;
  };
  for (binder_uintptr_t cookie = 1; cookie <= 200; cookie++) {
    if (cookie == 100) server.release();
    Call request = client.write(
        kClientMain, Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, cookie));
    ASSERT_EQ(request.result(), 0);
    // Every other round the message is read first, so the clear meets one in flight.
    bool in_flight = cookie % 2 && client.read(kClientMain, 256, /*nonblock=*/true).names() ==
                                       "BR_NOOP BR_FROZEN_BINDER";
    Call clear = client.write(kClientMain,
                              Commands().death(uapi::BC_CLEAR_FREEZE_NOTIFICATION, handle, cookie));
    ASSERT_EQ(clear.result(), 0);
    if (in_flight) {
      Call done =
          client.write(kClientMain, Commands().u32(uapi::BC_FREEZE_NOTIFICATION_DONE).u64(cookie));
      ASSERT_EQ(done.result(), 0);
    }
    ASSERT_TRUE(clear_done_after_acks(cookie)) << cookie;
  }
}

}  // namespace
}  // namespace cused::core::test
