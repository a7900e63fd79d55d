// conformance [gtest flags] DEVICE: raw-ioctl checks of binder semantics (spec S1-S9, the
// canonical sequences of S3.6) against any binder device: the kernel's /dev/binder in the
// tests/vm guest, or a cused mount. Every expectation is the kernel's; the roles of a test
// (context manager, server, client) are separate forked processes, each with its own open.
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "client/cused_differences.h"
#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

std::string g_device;  // argv[1]

// Arbitrary but recognisable codes and object identities (kCallCode, kRegisterCode: scenario.h).
constexpr std::uint32_t kReplyCode = 0x5f52504c;
constexpr binder_uintptr_t kObjectPtr = 0x7000100;
constexpr binder_uintptr_t kObjectCookie = 0x7000200;
constexpr binder_uintptr_t kDeathCookie = 0xdeadc0;

flat_binder_object LocalBinder(binder_uintptr_t ptr, binder_uintptr_t cookie) {
  flat_binder_object object{};
  object.hdr.type = BINDER_TYPE_BINDER;
  object.flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
  object.binder = ptr;
  object.cookie = cookie;
  return object;
}

// An fd to pass (S5.3): binder_fd_object has flat_binder_object's layout, the fd at byte 8.
flat_binder_object FdObject(int fd) {
  flat_binder_object object{};
  object.hdr.type = BINDER_TYPE_FD;
  object.handle = static_cast<std::uint32_t>(fd);
  return object;
}

// Frees `txn`'s buffer and replies; the replier's next read is BR_NOOP, BR_TRANSACTION_COMPLETE.
void FreeAndReply(const Endpoint& endpoint, const Return& txn, std::string_view data,
                  Commands before = {}) {
  before.free_buffer(txn.txn.data.ptr.buffer).reply(kReplyCode, data);
  ASSERT_EQ(endpoint.write(before), 0);
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));
  EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
}

// The owner's side of sending its object to the context manager in a sync call: the driver asks
// it for a weak and a strong reference before the completion (S3.5, S6.5); it acknowledges both
// (S6.6) and frees the reply.
void RegisterObjectWithManager(const Endpoint& owner, binder_uintptr_t ptr,
                               binder_uintptr_t cookie) {
  ASSERT_EQ(
      owner.write(Commands().transaction(0, kRegisterCode, "", 0, {{0, LocalBinder(ptr, cookie)}})),
      0);
  std::vector<Return> returns;
  ASSERT_TRUE(owner.read_until(BR_REPLY, returns));
  ASSERT_TRUE(HasCodes(returns, {BR_INCREFS, BR_ACQUIRE, BR_TRANSACTION_COMPLETE, BR_REPLY}));
  for (int i : {0, 1}) {
    EXPECT_EQ(returns[i].ptr_cookie.ptr, ptr);
    EXPECT_EQ(returns[i].ptr_cookie.cookie, cookie);
  }
  ASSERT_EQ(owner.write(Commands()
                            .ref_done(BC_INCREFS_DONE, ptr, cookie)
                            .ref_done(BC_ACQUIRE_DONE, ptr, cookie)
                            .free_buffer(returns[3].txn.data.ptr.buffer)),
            0);
}

// The manager's side: the registration arrives with the object rewritten to a handle (S5.1),
// whose number is returned.
std::uint32_t ReceiveRegisteredHandle(const Endpoint& manager, Return& txn) {
  EXPECT_TRUE(ReceiveTransaction(manager, txn));
  EXPECT_EQ(txn.txn.code, kRegisterCode);
  EXPECT_EQ(txn.txn.offsets_size, sizeof(binder_size_t));
  flat_binder_object object = txn.object_at(0);
  EXPECT_EQ(object.hdr.type, static_cast<std::uint32_t>(BINDER_TYPE_HANDLE));
  EXPECT_EQ(object.cookie, 0u);
  return object.handle;
}

// ---- ioctls (S2) ----

TEST(Ioctls, VersionIsProtocol8_S2_7) {
  Endpoint endpoint(g_device);
  EXPECT_EQ(endpoint.device().version(), 8);
}

TEST(Ioctls, SetMaxThreadsSucceeds_S2_2) {
  Endpoint endpoint(g_device);
  EXPECT_EQ(endpoint.device().set_max_threads(15), 0);
  EXPECT_EQ(endpoint.device().set_max_threads(0), 0);
}

TEST(Ioctls, UnknownAndUnimplementedIoctlsFailWithEinval_S2_0) {
  Endpoint endpoint(g_device);
  std::int64_t argument = 0;
  EXPECT_EQ(endpoint.device().ioctl(_IOW('b', 99, std::int64_t), &argument), -EINVAL);
  EXPECT_EQ(endpoint.device().ioctl(BINDER_SET_IDLE_TIMEOUT, &argument), -EINVAL);
  EXPECT_EQ(endpoint.device().ioctl(BINDER_SET_IDLE_PRIORITY, &argument), -EINVAL);
}

TEST(Ioctls, SecondContextManagerFailsWithEbusy_S2_3) {
  Channel manager_ready, rival_done;
  Child manager([&] {
    Endpoint endpoint(g_device);
    ASSERT_TRUE(endpoint.become_context_manager());
    std::int32_t unused = 0;
    EXPECT_EQ(endpoint.device().ioctl(BINDER_SET_CONTEXT_MGR, &unused), -EBUSY) << "same proc";
    manager_ready.send(1);
    EXPECT_TRUE(rival_done.wait());
  });
  Child rival([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(g_device);
    std::int32_t unused = 0;
    EXPECT_EQ(endpoint.device().ioctl(BINDER_SET_CONTEXT_MGR, &unused), -EBUSY);
    rival_done.send(1);
  });
  EXPECT_TRUE(rival.finish());
  EXPECT_TRUE(manager.finish());
}

// ---- transactions (S3.6, S4) ----

// S3.6 "sync call OK", S4.8: what the manager and the caller each read, and the fields of the
// delivered transaction and reply.
TEST(Transactions, SyncCallToContextManagerAndReply_S3_6_S4_8) {
  Channel caller_pid;
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        Return txn;
        ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
        std::uint64_t expected_pid = 0;
        ASSERT_TRUE(caller_pid.receive(expected_pid));
        EXPECT_EQ(txn.txn.target.ptr, 0u) << "plain SET_CONTEXT_MGR node has ptr 0";
        EXPECT_EQ(txn.txn.cookie, 0u);
        EXPECT_EQ(txn.txn.code, kCallCode);
        EXPECT_EQ(txn.txn.flags, 0u);
        EXPECT_EQ(static_cast<std::uint64_t>(txn.txn.sender_pid), expected_pid);
        EXPECT_EQ(txn.txn.sender_euid, ::geteuid());
        EXPECT_EQ(txn.data(), "ping");
        EXPECT_EQ(txn.txn.offsets_size, 0u);
        FreeAndReply(endpoint, txn, "pong!");
      },
      [&](const Endpoint& endpoint) {
        caller_pid.send(::getpid());
        ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "ping")), 0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
        ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE, BR_REPLY}));
        const Return& reply = returns[2];
        EXPECT_EQ(reply.txn.code, kReplyCode);
        EXPECT_EQ(reply.txn.target.ptr, 0u);
        EXPECT_EQ(reply.txn.cookie, 0u);
        EXPECT_EQ(reply.txn.sender_pid, 0) << "replies carry no sender pid";
        EXPECT_EQ(reply.txn.sender_euid, ::geteuid());
        EXPECT_EQ(reply.data(), "pong!");
        // The second free is the double-free guard's soft error (S9.9).
        Commands frees;
        frees.free_buffer(reply.txn.data.ptr.buffer).free_buffer(reply.txn.data.ptr.buffer);
        binder_size_t consumed = 0;
        ASSERT_EQ(endpoint.write(frees, &consumed), 0);
        EXPECT_EQ(consumed, frees.size());
        EXPECT_TRUE(endpoint.quiet_for()) << "freeing the reply produces nothing to read";
      });
}

// S3.6 "oneway OK", S4.5: oneways to one node arrive in order, each only after the previous
// one's buffer was freed; freeing an interior address (S9.9) does not count.
TEST(Transactions, OnewaysToOneNodeAreFifoAndWaitForBufferFree_S4_5_S9_9) {
  constexpr int kOneways = 3;
  Channel all_sent;
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        ASSERT_TRUE(all_sent.wait());
        for (int i = 0; i < kOneways; ++i) {
          SCOPED_TRACE("oneway " + std::to_string(i));
          Return txn;
          ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
          EXPECT_EQ(txn.txn.code, kCallCode + i);
          EXPECT_EQ(txn.txn.flags & TF_ONE_WAY, static_cast<std::uint32_t>(TF_ONE_WAY));
          EXPECT_EQ(txn.txn.sender_pid, 0) << "oneways carry no sender pid";
          EXPECT_EQ(txn.data(), "oneway" + std::to_string(i));
          EXPECT_TRUE(endpoint.quiet_for()) << "next oneway delivered before the buffer was freed";
          ASSERT_EQ(endpoint.write(Commands().free_buffer(txn.txn.data.ptr.buffer + 8)), 0);
          EXPECT_TRUE(endpoint.quiet_for()) << "an interior address released the async queue";
          ASSERT_EQ(endpoint.write(Commands().free_buffer(txn.txn.data.ptr.buffer)), 0);
        }
        EXPECT_TRUE(endpoint.quiet_for());
      },
      [&](const Endpoint& endpoint) {
        Commands oneways;
        for (int i = 0; i < kOneways; ++i)
          oneways.transaction(0, kCallCode + i, "oneway" + std::to_string(i), TF_ONE_WAY);
        ASSERT_EQ(endpoint.write(oneways), 0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
        EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE, BR_TRANSACTION_COMPLETE,
                                       BR_TRANSACTION_COMPLETE}));
        all_sent.send(1);
      });
}

// S4.4: a sync call made while serving goes to the caller's thread that waits for its reply
// (here the only thread, which never takes proc-wide work while it has a transaction stack).
TEST(Transactions, NestedCallReachesTheThreadWaitingForItsReply_S4_4) {
  Channel manager_ready, manager_pid;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(::getpid());
    Return outer;
    std::uint32_t handle = ReceiveRegisteredHandle(endpoint, outer);
    ASSERT_EQ(endpoint.write(Commands().transaction(handle, kCallCode + 1, "nested")), 0);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
    ASSERT_TRUE(HasCodes(returns, {BR_TRANSACTION_COMPLETE, BR_REPLY}));
    EXPECT_EQ(returns[1].data(), "nested reply");
    ASSERT_EQ(endpoint.write(Commands().free_buffer(returns[1].txn.data.ptr.buffer)), 0);
    FreeAndReply(endpoint, outer, "outer reply");
  });
  Child caller([&] {
    std::uint64_t manager = 0;
    ASSERT_TRUE(manager_ready.receive(manager));
    Endpoint endpoint(g_device);
    ASSERT_EQ(endpoint.write(Commands().transaction(0, kRegisterCode, "", 0,
                                                    {{0, LocalBinder(kObjectPtr, kObjectCookie)}})),
              0);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read_until(BR_TRANSACTION, returns));
    ASSERT_TRUE(
        HasCodes(returns, {BR_INCREFS, BR_ACQUIRE, BR_TRANSACTION_COMPLETE, BR_TRANSACTION}));
    const Return& nested = returns[3];
    EXPECT_EQ(nested.txn.target.ptr, kObjectPtr);
    EXPECT_EQ(nested.txn.cookie, kObjectCookie);
    EXPECT_EQ(nested.txn.code, kCallCode + 1);
    EXPECT_EQ(static_cast<std::uint64_t>(nested.txn.sender_pid), manager);
    EXPECT_EQ(nested.data(), "nested");
    Commands acks;
    acks.ref_done(BC_INCREFS_DONE, kObjectPtr, kObjectCookie)
        .ref_done(BC_ACQUIRE_DONE, kObjectPtr, kObjectCookie)
        .free_buffer(nested.txn.data.ptr.buffer)
        .reply(kReplyCode, "nested reply");
    ASSERT_EQ(endpoint.write(acks), 0);
    ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
    ASSERT_TRUE(HasCodes(returns, {BR_TRANSACTION_COMPLETE, BR_REPLY}));
    EXPECT_EQ(returns[1].data(), "outer reply");
    EXPECT_EQ(endpoint.write(Commands().free_buffer(returns[1].txn.data.ptr.buffer)), 0);
  });
  EXPECT_TRUE(caller.finish());
  EXPECT_TRUE(manager.finish());
}

// ---- objects and references (S5, S6) ----

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
    Endpoint endpoint(g_device);
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

// ---- death notifications (S7) ----

// S7.1-S7.4 with S1.9: the owner is killed; the manager reads BR_DEAD_BINDER, acknowledges it,
// clears the registration and reads BR_CLEAR_DEATH_NOTIFICATION_DONE.
TEST(Death, KilledOwnerGivesDeadBinderThenClearGivesClearDone_S7_2_S7_4) {
  Channel manager_ready, registered, owner_registered;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(1);
    Return registration;
    std::uint32_t handle = ReceiveRegisteredHandle(endpoint, registration);
    FreeAndReply(endpoint, registration, "",
                 Commands()
                     .ref(BC_INCREFS, handle)
                     .ref(BC_ACQUIRE, handle)
                     .death(BC_REQUEST_DEATH_NOTIFICATION, handle, kDeathCookie));
    registered.send(1);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_DEAD_BINDER}));
    EXPECT_EQ(returns[1].cookie, kDeathCookie);
    ASSERT_EQ(endpoint.write(Commands()
                                 .dead_binder_done(kDeathCookie)
                                 .death(BC_CLEAR_DEATH_NOTIFICATION, handle, kDeathCookie)),
              0);
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_CLEAR_DEATH_NOTIFICATION_DONE}));
    EXPECT_EQ(returns[1].cookie, kDeathCookie);

    // S7.1: registering on a handle whose node is already dead reports the death at once.
    ASSERT_EQ(
        endpoint.write(Commands().death(BC_REQUEST_DEATH_NOTIFICATION, handle, kDeathCookie + 1)),
        0);
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_DEAD_BINDER}));
    EXPECT_EQ(returns[1].cookie, kDeathCookie + 1);
    ASSERT_EQ(endpoint.write(Commands().dead_binder_done(kDeathCookie + 1)), 0);

    // S6.8, S4.1: a call on the dead node's handle fails with BR_DEAD_REPLY, no completion.
    ASSERT_EQ(endpoint.write(Commands().transaction(handle, kCallCode, "to the dead")), 0);
    ASSERT_TRUE(endpoint.read(returns));
    EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_DEAD_REPLY}));
    binder_extended_error error = endpoint.extended_error();
    EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_DEAD_REPLY));
    EXPECT_EQ(error.param, -EINVAL);
    EXPECT_EQ(endpoint.write(Commands().ref(BC_RELEASE, handle).ref(BC_DECREFS, handle)), 0);
  });
  Child owner([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(g_device);
    RegisterObjectWithManager(endpoint, kObjectPtr, kObjectCookie);
    owner_registered.send(::testing::Test::HasFailure() ? 0 : 1);
    ::pause();  // until killed
  });
  std::uint64_t owner_ok = 0;
  ASSERT_TRUE(owner_registered.receive(owner_ok));
  EXPECT_EQ(owner_ok, 1u);
  ASSERT_TRUE(registered.wait());
  owner.kill();
  EXPECT_TRUE(manager.finish());
}

// S7.4 (not yet triggered): clearing a live registration answers CLEAR_DONE at once, and the
// owner's later death sends no BR_DEAD_BINDER.
TEST(Death, ClearBeforeDeathGivesClearDoneAndNoDeadBinder_S7_4) {
  Channel manager_ready, cleared, owner_registered, owner_killed;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(1);
    Return registration;
    std::uint32_t handle = ReceiveRegisteredHandle(endpoint, registration);
    FreeAndReply(endpoint, registration, "",
                 Commands()
                     .ref(BC_INCREFS, handle)
                     .ref(BC_ACQUIRE, handle)
                     .death(BC_REQUEST_DEATH_NOTIFICATION, handle, kDeathCookie));
    ASSERT_EQ(endpoint.write(Commands().death(BC_CLEAR_DEATH_NOTIFICATION, handle, kDeathCookie)),
              0);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_CLEAR_DEATH_NOTIFICATION_DONE}));
    EXPECT_EQ(returns[1].cookie, kDeathCookie);
    cleared.send(1);
    ASSERT_TRUE(owner_killed.wait());
    EXPECT_TRUE(endpoint.quiet_for()) << "death reported after the registration was cleared";
  });
  Child owner([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(g_device);
    RegisterObjectWithManager(endpoint, kObjectPtr, kObjectCookie);
    owner_registered.send(::testing::Test::HasFailure() ? 0 : 1);
    ::pause();  // until killed
  });
  std::uint64_t owner_ok = 0;
  ASSERT_TRUE(owner_registered.receive(owner_ok));
  EXPECT_EQ(owner_ok, 1u);
  // The owner dies only once the registration is cleared (else BR_DEAD_BINDER would be right).
  ASSERT_TRUE(cleared.wait());
  owner.kill();
  owner_killed.send(1);
  EXPECT_TRUE(manager.finish());
}

// ---- failures (S2.1, S3.1, S3.6, S4.1, S4.6, S9.9, S2.14) ----

// S4.1, S3.1, S3.6 "send-side failure", S2.14.
TEST(Failures, TransactionToUnknownHandleFailsAndStopsTheWrite_S4_1_S3_1_S2_14) {
  Endpoint endpoint(g_device);
  Commands commands;
  commands.transaction(77, kCallCode, "nobody").code(BC_ENTER_LOOPER);
  binder_size_t consumed = 0;
  ASSERT_EQ(endpoint.write(commands, &consumed), 0);
  EXPECT_EQ(consumed, sizeof(std::uint32_t) + sizeof(binder_transaction_data))
      << "commands after the failed transaction are not consumed";
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));
  EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_FAILED_REPLY}));
  binder_extended_error error = endpoint.extended_error();
  EXPECT_NE(error.id, 0u);
  EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
  EXPECT_EQ(error.param, -EINVAL);
  error = endpoint.extended_error();
  EXPECT_EQ(error.id, 0u) << "reading the extended error resets it";
  EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_OK));
  EXPECT_EQ(error.param, 0);
}

// S4.6: a reply with no transaction to answer fails back to the replier (EPROTO).
TEST(Failures, ReplyWithoutTransactionFails_S4_6_S2_14) {
  Endpoint endpoint(g_device);
  ASSERT_EQ(endpoint.write(Commands().reply(kReplyCode, "to nobody")), 0);
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));
  EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_FAILED_REPLY}));
  binder_extended_error error = endpoint.extended_error();
  EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
  EXPECT_EQ(error.param, -EPROTO);
}

// S3.6 "target dies while the call is being served", S1.9: the caller reads its deferred
// completion, then BR_DEAD_REPLY.
TEST(Failures, ServerKilledWhileCallerWaitsGivesDeadReply_S3_6_S1_9) {
  Channel manager_ready, call_received;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(1);
    Return txn;
    EXPECT_TRUE(ReceiveTransaction(endpoint, txn));
    call_received.send(::testing::Test::HasFailure() ? 0 : 1);
    ::pause();  // until killed, without replying
  });
  Child caller([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(g_device);
    CallAndExpectFailureAfterCompletion(endpoint, "never answered", BR_DEAD_REPLY);
  });
  std::uint64_t received = 0;
  ASSERT_TRUE(call_received.receive(received));
  EXPECT_EQ(received, 1u);
  manager.kill();
  EXPECT_TRUE(caller.finish());
}

// S9.9: freeing an address that is no buffer is a soft error: the write succeeds, every command
// is consumed, and nothing is returned.
TEST(Failures, FreeBufferOfBogusAddressIsIgnored_S9_9) {
  Endpoint endpoint(g_device);
  const auto mapping = reinterpret_cast<binder_uintptr_t>(endpoint.device().mapping());
  Commands commands;
  commands.free_buffer(0).free_buffer(mapping).free_buffer(mapping + 64).free_buffer(0xdead0000);
  binder_size_t consumed = 0;
  EXPECT_EQ(endpoint.write(commands, &consumed), 0);
  EXPECT_EQ(consumed, commands.size());
  EXPECT_TRUE(endpoint.quiet_for());
}

// Two pages, the second inaccessible: commands placed at the end of the first run into it.
class GuardedPage {
 public:
  GuardedPage() {
    void* area =
        ::mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) return;
    area_ = static_cast<std::byte*>(area);
    ::mprotect(area_ + kPage, kPage, PROT_NONE);
  }
  ~GuardedPage() {
    if (area_) ::munmap(area_, 2 * kPage);
  }
  GuardedPage(const GuardedPage&) = delete;
  GuardedPage& operator=(const GuardedPage&) = delete;
  // The address `bytes` before the inaccessible page.
  std::byte* before_guard(std::size_t bytes) const { return area_ + kPage - bytes; }
  std::byte* guard() const { return area_ + kPage; }

 private:
  static constexpr std::size_t kPage = 4096;
  std::byte* area_ = nullptr;
};

// Writes `size` bytes of commands starting at `at`; returns 0/-errno and the counters.
int WriteRaw(const Endpoint& endpoint, const std::byte* at, std::size_t size,
             binder_write_read& bwr) {
  std::uint32_t read_buffer[32];
  bwr = {};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(at);
  bwr.write_size = size;
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(read_buffer);
  bwr.read_size = sizeof(read_buffer);
  return endpoint.device().write_read(bwr);
}

// S2.1, S3.1: an unreadable command or payload fails the ioctl with EFAULT; write_consumed
// counts the commands before it; no read is attempted (read_consumed 0).
TEST(Failures, UnreadableWriteBufferFailsWithEfault_S2_1_S3_1) {
  Endpoint endpoint(g_device);
  GuardedPage page;
  binder_write_read bwr;

  EXPECT_EQ(WriteRaw(endpoint, page.guard(), 4, bwr), -EFAULT) << "unreadable first command";
  EXPECT_EQ(bwr.write_consumed, 0u);
  EXPECT_EQ(bwr.read_consumed, 0u);

  const std::uint32_t enter_looper = BC_ENTER_LOOPER;
  std::memcpy(page.before_guard(4), &enter_looper, sizeof(enter_looper));
  EXPECT_EQ(WriteRaw(endpoint, page.before_guard(4), 8, bwr), -EFAULT) << "unreadable 2nd command";
  EXPECT_EQ(bwr.write_consumed, 4u);
  EXPECT_EQ(bwr.read_consumed, 0u);

  const std::uint32_t free_buffer = BC_FREE_BUFFER;
  std::memcpy(page.before_guard(4), &free_buffer, sizeof(free_buffer));
  EXPECT_EQ(WriteRaw(endpoint, page.before_guard(4), 12, bwr), -EFAULT) << "unreadable payload";
  EXPECT_EQ(bwr.write_consumed, 0u);
  EXPECT_EQ(bwr.read_consumed, 0u);
}

// S3.1: an unknown command fails the ioctl with EINVAL, write_consumed pointing at it.
TEST(Failures, UnknownCommandFailsWithEinvalAtThatCommand_S3_1) {
  Endpoint endpoint(g_device);
  Commands commands;
  commands.code(BC_ENTER_LOOPER).code(_IO('c', 99)).code(BC_EXIT_LOOPER);
  binder_size_t consumed = 0;
  EXPECT_EQ(endpoint.write(commands, &consumed), -EINVAL);
  EXPECT_EQ(consumed, 4u);
}

// S4.1, S6.3: the context manager may not call handle 0 (its own node) nor take a ref on it.
TEST(ContextManager, CannotCallOrReferenceHandleZero_S4_1_S6_3) {
  Endpoint endpoint = ContextManager();
  ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "to myself")), 0);
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));
  EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_FAILED_REPLY}));
  binder_extended_error error = endpoint.extended_error();
  EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
  EXPECT_EQ(error.param, -EINVAL);
  for (std::uint32_t command : {BC_INCREFS, BC_ACQUIRE}) {
    binder_size_t consumed = 99;
    EXPECT_EQ(endpoint.write(Commands().ref(command, 0), &consumed), -EINVAL);
    EXPECT_EQ(consumed, 0u);
  }
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

// S3.2: a read buffer with less than 76 bytes left can hold no item, even a small one: the read
// returns just BR_NOOP and the work stays queued for the next read.
TEST(Transactions, ReadBufferTooSmallForAnyItemReturnsOnlyNoop_S3_2) {
  Channel sent;
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        ASSERT_TRUE(sent.wait());
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns, kDeliveryTimeoutMs, 64));
        EXPECT_TRUE(HasCodes(returns, {BR_NOOP}));
        Return txn;
        ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
        EXPECT_EQ(txn.data(), "small");
        EXPECT_EQ(endpoint.write(Commands().free_buffer(txn.txn.data.ptr.buffer)), 0);
      },
      [&](const Endpoint& endpoint) {
        ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "small", TF_ONE_WAY)), 0);
        sent.send(1);
      });
}

// S4.11, S3.6 "send-side failure": malformed transaction data fails before delivery, with the
// kernel's errno in the extended error; the target sees nothing.
TEST(Failures, MalformedTransactionDataFails_S4_11_S2_14) {
  Channel all_sent;
  ManagerReceivesNothing(
      all_sent, "a malformed transaction was delivered", [&](const Endpoint& endpoint) {
        const std::uint64_t offsets[1] = {0};
        const char data[32] = "data";
        struct Case {
          const char* what;
          binder_transaction_data txn;
          std::int32_t param;
        };
        binder_transaction_data odd_offsets{};
        odd_offsets.data_size = sizeof(data);
        odd_offsets.offsets_size = 4;
        odd_offsets.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(data);
        odd_offsets.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(offsets);
        binder_transaction_data unreadable_data{};
        unreadable_data.data_size = sizeof(data);
        unreadable_data.data.ptr.buffer = 0x10;
        for (const Case& bad : {Case{"offsets_size not a multiple of 8", odd_offsets, -EINVAL},
                                Case{"unreadable data", unreadable_data, -EFAULT}}) {
          SCOPED_TRACE(bad.what);
          ASSERT_EQ(
              endpoint.write(Commands().with_payload(BC_TRANSACTION, &bad.txn, sizeof(bad.txn))),
              0);
          std::vector<Return> returns;
          ASSERT_TRUE(endpoint.read(returns));
          EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_FAILED_REPLY}));
          binder_extended_error error = endpoint.extended_error();
          EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
          EXPECT_EQ(error.param, bad.param);
        }
        all_sent.send(1);
      });
}

// S3.1: BC_ATTEMPT_ACQUIRE and BC_ACQUIRE_RESULT are not supported: EINVAL, not consumed.
TEST(Failures, UnsupportedCommandsFailWithEinval_S3_1) {
  Endpoint endpoint(g_device);
  const std::uint64_t payload = 0;
  for (std::uint32_t command : {BC_ATTEMPT_ACQUIRE, BC_ACQUIRE_RESULT}) {
    SCOPED_TRACE(command);
    Commands commands;
    commands.code(BC_ENTER_LOOPER).with_payload(command, &payload, _IOC_SIZE(command));
    binder_size_t consumed = 0;
    EXPECT_EQ(endpoint.write(commands, &consumed), -EINVAL);
    EXPECT_EQ(consumed, 4u);
  }
}

// S2.1: processing starts at write_buffer + write_consumed, so commands before it are skipped.
TEST(Failures, WriteStartsAtWriteConsumed_S2_1) {
  Endpoint endpoint(g_device);
  Commands commands;
  commands.code(_IO('c', 99)).code(BC_ENTER_LOOPER);
  binder_write_read bwr{};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(commands.data());
  bwr.write_size = commands.size();
  bwr.write_consumed = 4;  // past the unknown command, which would fail with EINVAL
  EXPECT_EQ(endpoint.device().write_read(bwr), 0);
  EXPECT_EQ(bwr.write_consumed, commands.size());
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

// S2.6: a thread that leaves with BINDER_THREAD_EXIT while serving a sync call leaves its caller
// a BR_DEAD_REPLY.
TEST(Failures, ThreadExitWhileServingGivesTheCallerDeadReply_S2_6) {
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        Return txn;
        ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
        std::int32_t unused = 0;
        EXPECT_EQ(endpoint.device().ioctl(BINDER_THREAD_EXIT, &unused), 0);
      },
      [&](const Endpoint& endpoint) {
        CallAndExpectFailureAfterCompletion(endpoint, "abandoned", BR_DEAD_REPLY);
      });
}

// S5.3: the plain context manager's node does not accept fds, so a transaction carrying one
// fails with EPERM before delivery.
TEST(Failures, FdToNodeThatDoesNotAcceptFdsFails_S5_3_S2_4) {
  Channel sent;
  ManagerReceivesNothing(
      sent, "the transaction with an fd was delivered", [&](const Endpoint& endpoint) {
        const flat_binder_object fd_object = FdObject(endpoint.fd());
        ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "", 0, {{0, fd_object}})), 0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
        EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_FAILED_REPLY}));
        binder_extended_error error = endpoint.extended_error();
        EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
        EXPECT_EQ(error.param, -EPERM);
        sent.send(1);
      });
}

// S3.3, S8.2: a looper with room in its pool (max_threads 1) whose read leaves no thread waiting
// gets BR_SPAWN_LOOPER in place of the leading BR_NOOP, once until a thread registers.
TEST(Transactions, SpawnLooperReplacesNoopUntilAThreadRegisters_S3_3_S8_2) {
  Channel manager_ready, sent;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    ASSERT_EQ(endpoint.device().set_max_threads(1), 0);
    manager_ready.send(1);
    ASSERT_TRUE(sent.wait());
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_SPAWN_LOOPER, BR_TRANSACTION}));
    EXPECT_EQ(endpoint.write(Commands().free_buffer(returns[1].txn.data.ptr.buffer)), 0);
    ASSERT_TRUE(endpoint.read(returns));
    EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION})) << "one request at a time";
    EXPECT_EQ(endpoint.write(Commands().free_buffer(returns[1].txn.data.ptr.buffer)), 0);
  });
  Child sender([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(g_device);
    // Two oneways to the same node: the second is released by the first one's free (S4.5).
    ASSERT_EQ(endpoint.write(Commands()
                                 .transaction(0, kCallCode, "first", TF_ONE_WAY)
                                 .transaction(0, kCallCode, "second", TF_ONE_WAY)),
              0);
    sent.send(1);
  });
  EXPECT_TRUE(sender.finish());
  EXPECT_TRUE(manager.finish());
}

// S3.6 "reply-side failure", S4.7, S2.14: a reply carrying an fd to a caller that did not set
// TF_ACCEPT_FDS fails on the caller's side only: the replier reads its completion and keeps an OK
// extended error; the caller reads its completion, then BR_FAILED_REPLY, and its extended error
// holds the replier's EPERM.
TEST(Failures, ReplyWithFdToCallerWithoutAcceptFdsFailsOnTheCallerSide_S3_6_S4_7) {
  ManagerAndClient(
      [&](const Endpoint& endpoint) {
        Return txn;
        ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
        const flat_binder_object fd_object = FdObject(endpoint.fd());
        ASSERT_EQ(endpoint.write(Commands()
                                     .free_buffer(txn.txn.data.ptr.buffer)
                                     .reply(kReplyCode, "", 0, {{0, fd_object}})),
                  0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
        EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
        binder_extended_error error = endpoint.extended_error();
        EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_OK));
        EXPECT_EQ(error.param, 0);
      },
      [&](const Endpoint& endpoint) {
        CallAndExpectFailureAfterCompletion(endpoint, "no fds please", BR_FAILED_REPLY);
        binder_extended_error error = endpoint.extended_error();
        EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
        EXPECT_EQ(error.param, -EPERM);
      });
}

}  // namespace

const std::string& DevicePath() { return g_device; }

}  // namespace cused::conformance

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s [gtest flags] DEVICE (e.g. /dev/binder)\n", argv[0]);
    return 2;
  }
  cused::conformance::g_device = argv[1];
  return RUN_ALL_TESTS();
}
