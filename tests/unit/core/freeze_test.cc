// BINDER_FREEZE / BINDER_GET_FROZEN_INFO (S2.10, S2.11), frozen targets and TF_UPDATE_TXN (S4.13),
// freeze notifications (S7.6-S7.9) and their teardown races (S11.13).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/debug_print.h"
#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

constexpr pid_t kFreezer = 400, kFreezerMain = 401;
constexpr binder_uintptr_t kCookie = 0xf00d;

class FreezeTest : public World {
 protected:
  void SetUp() override {
    World::SetUp();
    warm(freezer, kFreezerMain);
  }

  long freeze(pid_t pid, bool enable, std::uint32_t timeout_ms = 0) {
    binder_freeze_info info{static_cast<__u32>(pid), enable ? 1u : 0u, timeout_ms};
    return freezer.ioctl(kFreezerMain, BINDER_FREEZE, info);
  }
  Call freeze_async(pid_t pid, std::uint32_t timeout_ms) {
    binder_freeze_info info{static_cast<__u32>(pid), 1, timeout_ms};
    return freezer.ioctl_async(kFreezerMain, BINDER_FREEZE, info);
  }
  binder_frozen_status_info frozen_info(pid_t pid, long expect = 0) {
    binder_frozen_status_info info{static_cast<__u32>(pid), 0xff, 0xff};
    EXPECT_EQ(freezer.ioctl(kFreezerMain, BINDER_GET_FROZEN_INFO, info), expect);
    return info;
  }
  // The client sends a oneway with `code`, `flags` and one u32 `value` to its handle.
  Call oneway(std::uint32_t handle, std::uint32_t code, std::uint32_t flags, std::uint32_t value) {
    return client.write_read(
        kClientMain, Commands().transaction(handle, code, TF_ONE_WAY | flags, Parcel().u32(value)));
  }
  static uapi::binder_frozen_state_info frozen_state(const Call& call) {
    uapi::binder_frozen_state_info state{};
    for (const Br& item : call.items()) {
      if (item.cmd == uapi::BR_FROZEN_BINDER)
        std::memcpy(&state, item.payload.data(), sizeof state);
    }
    return state;
  }
  // The client's handle to the server's object.
  std::uint32_t server_handle() { return fetch(publish()); }

  Client freezer{env, kFreezer};
};

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

// S7.6: a registration hears the owner's current state at once; unknown handle and a second
// registration on the same ref are hard errors (EINVAL, write_consumed at the command).
TEST_F(FreezeTest, RequestReportsCurrentStateAndErrors_S7_6) {
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
TEST_F(FreezeTest, StateChangesAndDone_S7_7_S7_8) {
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
TEST_F(FreezeTest, QueuedMessageIsCoalesced_S7_7) {
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
TEST_F(FreezeTest, ClearInEveryState_S7_9) {
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
TEST_F(FreezeTest, DeadNodeRegistration_S11_13) {
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
TEST_F(FreezeTest, HolderAndOwnerTeardownRaces_S11_13) {
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
TEST_F(FreezeTest, FreezeLoopsRaceClearsAndOwnerDeath_S11_13) {
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
