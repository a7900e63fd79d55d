// SPDX-License-Identifier: GPL-2.0-only
// Objects and references (S5, S6): binders becoming handles, handle numbers, weak handles,
// handles sent back to their owner. Every expectation is the kernel's.
#include <errno.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/registration.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

// S5.1, S6.5, S6.6, S4.8: the owner's object reaches the manager as handle 1 (lowest free, S6.2);
// the owner is asked for refs before its completion; a call on the handle reaches the owner with
// its ptr and cookie.
TEST(Objects, BinderSentToManagerBecomesAHandleThatReachesTheOwner_S5_1_S6_5) {
  Channel manager_ready, owner_served;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(::getpid());
    Return registration;
    std::uint32_t handle = ReceiveRegisteredHandle(endpoint, registration);
    EXPECT_EQ(handle, 1u);
    FreeAndReply(endpoint, registration, "",
                 Commands().ref(BC_INCREFS, handle).ref(BC_ACQUIRE, handle));
    ASSERT_EQ(endpoint.write(Commands().transaction(handle, kCallCode, "to owner")), 0);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
    ASSERT_TRUE(HasCodes(returns, {BR_TRANSACTION_COMPLETE, BR_REPLY}));
    EXPECT_EQ(returns[1].data(), "from owner");
    EXPECT_EQ(endpoint.write(Commands().free_buffer(returns[1].txn.data.ptr.buffer)), 0);
    owner_served.send(1);
  });
  Child owner([&] {
    std::uint64_t manager_pid = 0;
    ASSERT_TRUE(manager_ready.receive(manager_pid));
    Endpoint endpoint(DevicePath());
    RegisterObjectWithManager(endpoint, kObjectPtr, kObjectCookie);
    ASSERT_EQ(endpoint.write(Commands().code(BC_ENTER_LOOPER)), 0);
    Return call;
    ASSERT_TRUE(ReceiveTransaction(endpoint, call));
    EXPECT_EQ(call.txn.target.ptr, kObjectPtr);
    EXPECT_EQ(call.txn.cookie, kObjectCookie);
    EXPECT_EQ(call.txn.code, kCallCode);
    EXPECT_EQ(static_cast<std::uint64_t>(call.txn.sender_pid), manager_pid);
    EXPECT_EQ(call.data(), "to owner");
    FreeAndReply(endpoint, call, "from owner");
    EXPECT_TRUE(owner_served.wait());
  });
  EXPECT_TRUE(owner.finish());
  EXPECT_TRUE(manager.finish());
}

// S6.2, S5.8: handles are the lowest free numbers >= 1; a ref that only the buffer held dies
// with BC_FREE_BUFFER and its number is reused.
TEST(Objects, NewHandlesTakeTheLowestFreeNumber_S6_2_S5_8) {
  Channel second_round, owner_done;
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        Return first;
        ASSERT_TRUE(ReceiveTransaction(endpoint, first));
        ASSERT_EQ(first.txn.offsets_size, 3 * sizeof(binder_size_t));
        for (std::uint32_t i = 0; i < 3; ++i) {
          flat_binder_object object = first.object_at(i * sizeof(flat_binder_object));
          EXPECT_EQ(object.hdr.type, static_cast<std::uint32_t>(BINDER_TYPE_HANDLE));
          EXPECT_EQ(object.handle, i + 1);
        }
        // Keep handles 1 and 3; handle 2 is held only by the buffer.
        FreeAndReply(endpoint, first, "", Commands().ref(BC_ACQUIRE, 1).ref(BC_ACQUIRE, 3));
        second_round.send(1);
        Return second;
        std::uint32_t handle = ReceiveRegisteredHandle(endpoint, second);
        EXPECT_EQ(handle, 2u) << "the freed number 2 is the lowest free";
        // Holding the new handle past the free keeps the owner's BR_INCREFS/BR_ACQUIRE (S6.5).
        FreeAndReply(endpoint, second, "", Commands().ref(BC_ACQUIRE, handle));
        // Stay alive until the owner has read: the manager's refs die with its proc, and a node
        // that loses its last ref before the owner reads takes its unread node work with it (S6.5).
        EXPECT_TRUE(owner_done.wait());
      },
      [&](const Endpoint& endpoint) {
        std::vector<EmbeddedObject> objects;
        for (binder_uintptr_t i = 0; i < 3; ++i)
          objects.push_back({i * sizeof(flat_binder_object),
                             LocalBinder(kObjectPtr + 0x100 * i, kObjectCookie + i)});
        ASSERT_EQ(endpoint.write(Commands().transaction(0, kRegisterCode, "", 0, objects)), 0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
        // The middle object's ref came and went before this read: its node work coalesces to
        // nothing (S6.5), so only the first and third objects are asked for references.
        ASSERT_TRUE(HasCodes(returns, {BR_INCREFS, BR_ACQUIRE, BR_INCREFS, BR_ACQUIRE,
                                       BR_TRANSACTION_COMPLETE, BR_REPLY}));
        Commands acks;
        for (int i : {0, 2}) {
          const binder_uintptr_t ptr = kObjectPtr + 0x100 * i;
          const binder_uintptr_t cookie = kObjectCookie + i;
          for (int j : {0, 1}) {
            EXPECT_EQ(returns[i + j].ptr_cookie.ptr, ptr);
            EXPECT_EQ(returns[i + j].ptr_cookie.cookie, cookie);
          }
          acks.ref_done(BC_INCREFS_DONE, ptr, cookie).ref_done(BC_ACQUIRE_DONE, ptr, cookie);
        }
        acks.free_buffer(returns.back().txn.data.ptr.buffer);
        ASSERT_EQ(endpoint.write(acks), 0);
        ASSERT_TRUE(second_round.wait());
        RegisterObjectWithManager(endpoint, kObjectPtr + 0x1000, kObjectCookie + 0x1000);
        owner_done.send(1);
      });
}

// S4.1, S6.4: a handle with only a weak reference cannot be called; the owner was asked for a
// weak reference only (S6.5).
TEST(Objects, WeakOnlyHandleCannotBeCalled_S4_1_S6_5) {
  Channel owner_done;
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        Return registration;
        std::uint32_t handle = ReceiveRegisteredHandle(endpoint, registration);
        FreeAndReply(endpoint, registration, "", Commands().ref(BC_INCREFS, handle));
        ASSERT_EQ(endpoint.write(Commands().transaction(handle, kCallCode, "weak")), 0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
        EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_FAILED_REPLY}));
        binder_extended_error error = endpoint.extended_error();
        EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
        EXPECT_EQ(error.param, -EINVAL);
        // Stay alive until the owner has read (see NewHandlesTakeTheLowestFreeNumber).
        EXPECT_TRUE(owner_done.wait());
      },
      [&](const Endpoint& endpoint) {
        ASSERT_EQ(endpoint.write(Commands().transaction(
                      0, kRegisterCode, "", 0, {{0, LocalBinder(kObjectPtr, kObjectCookie)}})),
                  0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
        ASSERT_TRUE(HasCodes(returns, {BR_INCREFS, BR_TRANSACTION_COMPLETE, BR_REPLY}));
        EXPECT_EQ(returns[0].ptr_cookie.ptr, kObjectPtr);
        ASSERT_EQ(endpoint.write(Commands()
                                     .ref_done(BC_INCREFS_DONE, kObjectPtr, kObjectCookie)
                                     .free_buffer(returns[2].txn.data.ptr.buffer)),
                  0);
        owner_done.send(1);
      });
}

// S5.2: a handle sent back to its node's owner arrives as the owner's own BINDER (ptr, cookie),
// with no new BR_INCREFS/BR_ACQUIRE for it.
TEST(Objects, HandleSentBackToItsOwnerArrivesAsItsBinder_S5_2) {
  Channel owner_done;
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        Return registration;
        std::uint32_t handle = ReceiveRegisteredHandle(endpoint, registration);
        flat_binder_object back{};
        back.hdr.type = BINDER_TYPE_HANDLE;
        back.handle = handle;
        ASSERT_EQ(endpoint.write(Commands()
                                     .ref(BC_INCREFS, handle)
                                     .ref(BC_ACQUIRE, handle)
                                     .free_buffer(registration.txn.data.ptr.buffer)
                                     .reply(kReplyCode, "", 0, {{0, back}})),
                  0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
        EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
        EXPECT_TRUE(owner_done.wait());
      },
      [&](const Endpoint& endpoint) {
        ASSERT_EQ(endpoint.write(Commands().transaction(
                      0, kRegisterCode, "", 0, {{0, LocalBinder(kObjectPtr, kObjectCookie)}})),
                  0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
        ASSERT_TRUE(HasCodes(returns, {BR_INCREFS, BR_ACQUIRE, BR_TRANSACTION_COMPLETE, BR_REPLY}));
        const Return& reply = returns[3];
        ASSERT_EQ(reply.txn.offsets_size, sizeof(binder_size_t));
        flat_binder_object object = reply.object_at(0);
        EXPECT_EQ(object.hdr.type, static_cast<std::uint32_t>(BINDER_TYPE_BINDER));
        EXPECT_EQ(object.binder, kObjectPtr);
        EXPECT_EQ(object.cookie, kObjectCookie);
        ASSERT_EQ(endpoint.write(Commands()
                                     .ref_done(BC_INCREFS_DONE, kObjectPtr, kObjectCookie)
                                     .ref_done(BC_ACQUIRE_DONE, kObjectPtr, kObjectCookie)
                                     .free_buffer(reply.txn.data.ptr.buffer)),
                  0);
        EXPECT_TRUE(endpoint.quiet_for()) << "the node is still referenced by the manager";
        owner_done.send(1);
      });
}

}  // namespace
}  // namespace cused::conformance
