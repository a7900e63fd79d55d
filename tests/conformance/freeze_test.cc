// SPDX-License-Identifier: GPL-2.0-only
// Freezing (S2.10, S2.11, S4.13), oneway spam detection (S2.12, S9.7) and freeze notifications
// (S7.6-S7.9, S11.13) across processes. Every expectation is the kernel's; a feature the device
// does not advertise in its binderfs features/ directory is skipped, with the reason.
#include <errno.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

constexpr std::uint32_t kOnewayCode = 0x5f4f4e57;
constexpr binder_uintptr_t kObjectPtr = 0x7100100;
constexpr binder_uintptr_t kObjectCookie = 0x7100200;
constexpr binder_uintptr_t kFreezeCookie = 0xf4ee2e;
constexpr pid_t kNoSuchPid = 0x3fffffff;  // above any pid_max

int Freeze(const Endpoint& endpoint, pid_t pid, bool enable, std::uint32_t timeout_ms = 0) {
  binder_freeze_info info{static_cast<__u32>(pid), enable ? 1u : 0u, timeout_ms};
  return endpoint.device().ioctl(BINDER_FREEZE, &info);
}

binder_frozen_status_info FrozenInfo(const Endpoint& endpoint, pid_t pid) {
  binder_frozen_status_info info{static_cast<__u32>(pid), 0, 0};
  EXPECT_EQ(endpoint.device().ioctl(BINDER_GET_FROZEN_INFO, &info), 0);
  return info;
}

// A context manager that reads nothing until the test says `go`: a frozen process does not run,
// and the kernel hands oneways even to a frozen proc's waiting thread.
struct IdleManager {
  explicit IdleManager(std::function<void(const Endpoint&)> after_go)
      : child([this, after_go] {
          Endpoint endpoint = ContextManager();
          ready.send(1);
          ASSERT_TRUE(go.wait(30000));
          after_go(endpoint);
        }) {
    EXPECT_TRUE(ready.wait());
  }
  pid_t pid() const { return child.pid(); }

  Channel ready, go;
  Child child;
};

// The next read of `endpoint` is exactly `codes` (after its leading BR_NOOP).
::testing::AssertionResult Reads(const Endpoint& endpoint, std::vector<std::uint32_t> codes,
                                 std::vector<Return>* out = nullptr) {
  std::vector<Return> returns;
  if (auto result = endpoint.read(returns); !result) return result;
  codes.insert(codes.begin(), BR_NOOP);
  if (out) *out = returns;
  return HasCodes(returns, codes);
}

// Receives one transaction, checks its data and frees it.
void ReceiveAndFree(const Endpoint& endpoint, std::uint32_t code, const std::string& data) {
  std::vector<Return> returns;
  ASSERT_TRUE(Reads(endpoint, {BR_TRANSACTION}, &returns));
  EXPECT_EQ(returns[1].txn.code, code);
  EXPECT_EQ(returns[1].data(), data);
  EXPECT_EQ(endpoint.write(Commands().free_buffer(returns[1].txn.data.ptr.buffer)), 0);
}

// S2.10 / S2.11 / S4.13: a frozen proc refuses sync calls (BR_FROZEN_REPLY, sync_recv bit 0) and
// queues oneways (BR_TRANSACTION_PENDING_FROZEN for the sender, async_recv, pending bit 1);
// thawing clears the bits and the queued oneway is read normally. No proc: EINVAL.
TEST(Freeze, FrozenProcRefusesCallsAndQueuesOneways_S2_10_S2_11_S4_13) {
  IdleManager manager(
      [](const Endpoint& endpoint) { ReceiveAndFree(endpoint, kOnewayCode, "queued"); });
  Endpoint client(DevicePath());
  EXPECT_EQ(Freeze(client, kNoSuchPid, true), -EINVAL);
  binder_frozen_status_info none{static_cast<__u32>(kNoSuchPid), 0, 0};
  EXPECT_EQ(client.device().ioctl(BINDER_GET_FROZEN_INFO, &none), -EINVAL);

  ASSERT_EQ(Freeze(client, manager.pid(), true), 0);
  ASSERT_EQ(client.write(Commands().transaction(0, kCallCode, "sync")), 0);
  EXPECT_TRUE(Reads(client, {BR_FROZEN_REPLY}));
  EXPECT_EQ(client.extended_error().command, static_cast<std::uint32_t>(BR_FROZEN_REPLY));
  binder_frozen_status_info info = FrozenInfo(client, manager.pid());
  EXPECT_EQ(info.sync_recv, 1u);
  EXPECT_EQ(info.async_recv, 0u);

  ASSERT_EQ(client.write(Commands().transaction(0, kOnewayCode, "queued", TF_ONE_WAY)), 0);
  EXPECT_TRUE(Reads(client, {uapi::BR_TRANSACTION_PENDING_FROZEN}));
  info = FrozenInfo(client, manager.pid());
  EXPECT_EQ(info.sync_recv, 3u);
  EXPECT_EQ(info.async_recv, 1u);

  ASSERT_EQ(Freeze(client, manager.pid(), false), 0);
  info = FrozenInfo(client, manager.pid());
  EXPECT_EQ(info.sync_recv, 2u) << "the oneway is still pending";
  EXPECT_EQ(info.async_recv, 0u);
  manager.go.send(1);
  EXPECT_TRUE(manager.child.finish());
}

// S2.10: a proc with an undelivered call, serving one, or waiting for a reply cannot be frozen
// (EAGAIN at once with timeout 0, after the timeout otherwise); a freeze with a timeout succeeds
// when the proc drains in time.
TEST(Freeze, BusyProcIsEagainUnlessItDrainsInTime_S2_10) {
  Channel manager_ready, served, go, oneway_sent;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(1);
    manager_ready.send(1);
    std::vector<Return> call;
    ASSERT_TRUE(Reads(endpoint, {BR_TRANSACTION}, &call));
    served.send(1);
    ASSERT_TRUE(go.wait());
    ASSERT_EQ(endpoint.write(
                  Commands().free_buffer(call[1].txn.data.ptr.buffer).reply(kCallCode, "done")),
              0);
    EXPECT_TRUE(Reads(endpoint, {BR_TRANSACTION_COMPLETE}));
    ASSERT_TRUE(go.wait());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ReceiveAndFree(endpoint, kOnewayCode, "late");
    ASSERT_TRUE(go.wait());  // alive until the test has thawed it
  });
  Child caller([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "call")), 0);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
    ASSERT_EQ(endpoint.write(Commands()
                                 .free_buffer(returns.back().txn.data.ptr.buffer)
                                 .transaction(0, kOnewayCode, "late", TF_ONE_WAY)),
              0);
    EXPECT_TRUE(Reads(endpoint, {BR_TRANSACTION_COMPLETE}));
    oneway_sent.send(1);
  });
  ASSERT_TRUE(manager_ready.wait());
  Endpoint freezer(DevicePath());
  ASSERT_TRUE(served.wait());
  EXPECT_EQ(Freeze(freezer, manager.pid(), true), -EAGAIN) << "serving a call";
  EXPECT_EQ(Freeze(freezer, caller.pid(), true), -EAGAIN) << "waiting for a reply";
  EXPECT_EQ(Freeze(freezer, manager.pid(), true, 100), -EAGAIN) << "still serving";
  EXPECT_EQ(FrozenInfo(freezer, manager.pid()).sync_recv, 2u);
  go.send(1);
  ASSERT_TRUE(oneway_sent.wait());
  EXPECT_EQ(Freeze(freezer, manager.pid(), true), -EAGAIN) << "undelivered oneway";
  go.send(1);
  EXPECT_EQ(Freeze(freezer, manager.pid(), true, 10000), 0) << "drained during the wait";
  EXPECT_EQ(Freeze(freezer, manager.pid(), false), 0);
  go.send(1);
  EXPECT_TRUE(caller.finish());
  EXPECT_TRUE(manager.finish());
}

// S4.13 TF_UPDATE_TXN: oneways to a frozen proc that wait in the node's async queue are replaced
// by a newer one with the same code and flags from the same sender; the first one (already past
// the queue) stays. After the thaw the receiver sees the first and the last only.
TEST(Freeze, UpdateTxnSupersedesQueuedOneway_S4_13) {
  IdleManager manager([](const Endpoint& endpoint) {
    ReceiveAndFree(endpoint, kOnewayCode, "state 1");
    ReceiveAndFree(endpoint, kOnewayCode, "state 4");
    EXPECT_TRUE(endpoint.quiet_for()) << "states 2 and 3 were superseded";
  });
  Endpoint client(DevicePath());
  ASSERT_EQ(Freeze(client, manager.pid(), true), 0);
  for (int state = 1; state <= 4; state++) {
    ASSERT_EQ(client.write(Commands().transaction(0, kOnewayCode, "state " + std::to_string(state),
                                                  TF_ONE_WAY | TF_UPDATE_TXN)),
              0);
    EXPECT_TRUE(Reads(client, {uapi::BR_TRANSACTION_PENDING_FROZEN}));
  }
  ASSERT_EQ(Freeze(client, manager.pid(), false), 0);
  manager.go.send(1);
  EXPECT_TRUE(manager.child.finish());
}

// S2.12 / S9.7: a sender filling the receiver's async budget with oneways is flagged once, with
// BR_ONEWAY_SPAM_SUSPECT instead of its completion, because it enabled detection.
TEST(OnewaySpam, SenderThatEnabledDetectionIsFlaggedOnce_S2_12_S9_7) {
  IdleManager manager([](const Endpoint&) {});  // never reads: the buffers stay allocated
  Endpoint client(DevicePath());
  std::uint32_t enable = 1;
  ASSERT_EQ(client.device().ioctl(BINDER_ENABLE_ONEWAY_SPAM_DETECTION, &enable), 0);
  const std::string payload(8 * 1024, 'x');
  int suspects = 0;
  for (int sent = 0; sent < 60; sent++) {
    ASSERT_EQ(client.write(Commands().transaction(0, kOnewayCode, payload, TF_ONE_WAY)), 0);
    std::vector<Return> returns;
    ASSERT_TRUE(client.read(returns));
    if (HasCodes(returns, {BR_NOOP, BR_ONEWAY_SPAM_SUSPECT}))
      suspects++;
    else
      ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE})) << sent;
  }
  EXPECT_EQ(suspects, 1);
  manager.go.send(1);
  EXPECT_TRUE(manager.child.finish());
}

// The owner's side: sends its object to the manager in a sync call and acknowledges the
// references the driver asks for (S6.5, S6.6).
void RegisterObject(const Endpoint& owner) {
  flat_binder_object object{};
  object.hdr.type = BINDER_TYPE_BINDER;
  object.binder = kObjectPtr;
  object.cookie = kObjectCookie;
  ASSERT_EQ(owner.write(Commands().transaction(0, kRegisterCode, "", 0, {{0, object}})), 0);
  std::vector<Return> returns;
  ASSERT_TRUE(owner.read_until(BR_REPLY, returns));
  ASSERT_TRUE(HasCodes(returns, {BR_INCREFS, BR_ACQUIRE, BR_TRANSACTION_COMPLETE, BR_REPLY}));
  ASSERT_EQ(owner.write(Commands()
                            .ref_done(BC_INCREFS_DONE, kObjectPtr, kObjectCookie)
                            .ref_done(BC_ACQUIRE_DONE, kObjectPtr, kObjectCookie)
                            .free_buffer(returns[3].txn.data.ptr.buffer)),
            0);
}

// The manager's side: keeps the registered handle and replies.
std::uint32_t KeepRegisteredHandle(const Endpoint& manager) {
  std::vector<Return> returns;
  EXPECT_TRUE(Reads(manager, {BR_TRANSACTION}, &returns));
  std::uint32_t handle = returns[1].object_at(0).handle;
  EXPECT_EQ(manager.write(Commands()
                              .ref(BC_INCREFS, handle)
                              .ref(BC_ACQUIRE, handle)
                              .free_buffer(returns[1].txn.data.ptr.buffer)
                              .reply(kRegisterCode, "")),
            0);
  EXPECT_TRUE(Reads(manager, {BR_TRANSACTION_COMPLETE}));
  return handle;
}

// The next read is one BR_FROZEN_BINDER with `cookie` and `is_frozen`.
::testing::AssertionResult ReadsFrozenBinder(const Endpoint& endpoint, binder_uintptr_t cookie,
                                             std::uint32_t is_frozen) {
  std::vector<Return> returns;
  if (auto result = Reads(endpoint, {uapi::BR_FROZEN_BINDER}, &returns); !result) return result;
  if (returns[1].frozen.cookie != cookie || returns[1].frozen.is_frozen != is_frozen)
    return ::testing::AssertionFailure() << "BR_FROZEN_BINDER cookie " << returns[1].frozen.cookie
                                         << " is_frozen " << returns[1].frozen.is_frozen;
  return ::testing::AssertionSuccess();
}

Commands FreezeDone(binder_uintptr_t cookie) {
  return Commands().with_payload(uapi::BC_FREEZE_NOTIFICATION_DONE, &cookie, sizeof cookie);
}

// The manager's side of the notification tests: keeps the owner's handle and registers a freeze
// notification on it, which reports "not frozen" at once (S7.6).
std::uint32_t WatchOwner(const Endpoint& endpoint, const Channel& manager_ready) {
  manager_ready.send(1);
  std::uint32_t handle = KeepRegisteredHandle(endpoint);
  EXPECT_EQ(
      endpoint.write(Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, kFreezeCookie)),
      0);
  EXPECT_TRUE(ReadsFrozenBinder(endpoint, kFreezeCookie, 0));
  return handle;
}

#define SKIP_WITHOUT_FREEZE_NOTIFICATION()                            \
  if (!DeviceHasFeature("freeze_notification"))                       \
  GTEST_SKIP() << DevicePath()                                        \
               << " does not advertise features/freeze_notification " \
                  "(no binderfs, or a kernel older than 6.12's successors)"

// S7.6-S7.9: the registration reports the current state, every freeze and thaw of the owner is
// reported once acknowledged, clearing answers CLEAR_DONE; protocol mistakes are hard EINVALs.
TEST(FreezeNotification, StateChangesAcknowledgementsAndClear_S7_6_S7_7_S7_8_S7_9) {
  SKIP_WITHOUT_FREEZE_NOTIFICATION();
  Channel manager_ready, registered, acknowledged, owner_idle;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    std::uint32_t handle = WatchOwner(endpoint, manager_ready);
    binder_size_t consumed = 0;
    EXPECT_EQ(endpoint.write(Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, handle, 1),
                             &consumed),
              -EINVAL)
        << "already registered";
    EXPECT_EQ(endpoint.write(Commands().death(uapi::BC_REQUEST_FREEZE_NOTIFICATION, 99, 1)),
              -EINVAL)
        << "no such handle";
    EXPECT_EQ(endpoint.write(FreezeDone(kFreezeCookie + 1)), -EINVAL) << "unknown cookie";
    EXPECT_EQ(endpoint.write(FreezeDone(kFreezeCookie)), 0);
    registered.send(1);
    EXPECT_TRUE(ReadsFrozenBinder(endpoint, kFreezeCookie, 1));
    EXPECT_EQ(endpoint.write(FreezeDone(kFreezeCookie)), 0);
    acknowledged.send(1);
    EXPECT_TRUE(ReadsFrozenBinder(endpoint, kFreezeCookie, 0));
    EXPECT_EQ(endpoint.write(FreezeDone(kFreezeCookie)), 0);
    EXPECT_EQ(endpoint.write(
                  Commands().death(uapi::BC_CLEAR_FREEZE_NOTIFICATION, handle, kFreezeCookie + 1)),
              -EINVAL)
        << "cookie mismatch";
    ASSERT_EQ(
        endpoint.write(Commands().death(uapi::BC_CLEAR_FREEZE_NOTIFICATION, handle, kFreezeCookie)),
        0);
    std::vector<Return> returns;
    EXPECT_TRUE(Reads(endpoint, {uapi::BR_CLEAR_FREEZE_NOTIFICATION_DONE}, &returns));
    EXPECT_EQ(returns[1].cookie, kFreezeCookie);
    EXPECT_EQ(
        endpoint.write(Commands().death(uapi::BC_CLEAR_FREEZE_NOTIFICATION, handle, kFreezeCookie)),
        -EINVAL)
        << "nothing registered any more";
  });
  Child owner([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    RegisterObject(endpoint);
    owner_idle.send(1);
    ::pause();  // until killed
  });
  Endpoint freezer(DevicePath());
  ASSERT_TRUE(registered.wait());
  ASSERT_TRUE(owner_idle.wait()) << "an unread BR_REPLY is a pending transaction: EAGAIN";
  EXPECT_EQ(Freeze(freezer, owner.pid(), true), 0);
  ASSERT_TRUE(acknowledged.wait());
  EXPECT_EQ(Freeze(freezer, owner.pid(), false), 0);
  EXPECT_TRUE(manager.finish());
  owner.kill();
}

// S11.13: the holder dies with a notification delivered and unacknowledged while the owner is
// frozen and thawed; freezing and thawing the owner keeps working.
TEST(FreezeNotification, HolderDiesWithNotificationInFlight_S11_13) {
  SKIP_WITHOUT_FREEZE_NOTIFICATION();
  Channel manager_ready, registered, owner_idle;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    WatchOwner(endpoint, manager_ready);
    registered.send(1);
    ::pause();  // never acknowledges; killed
  });
  Child owner([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    RegisterObject(endpoint);
    owner_idle.send(1);
    ::pause();
  });
  Endpoint freezer(DevicePath());
  ASSERT_TRUE(registered.wait());
  ASSERT_TRUE(owner_idle.wait()) << "an unread BR_REPLY is a pending transaction: EAGAIN";
  EXPECT_EQ(Freeze(freezer, owner.pid(), true), 0);
  manager.kill();
  for (int i = 0; i < 5; i++) {
    EXPECT_EQ(Freeze(freezer, owner.pid(), false), 0);
    EXPECT_EQ(Freeze(freezer, owner.pid(), true), 0);
  }
  EXPECT_EQ(Freeze(freezer, owner.pid(), false), 0);
  owner.kill();
}

}  // namespace
}  // namespace cused::conformance
