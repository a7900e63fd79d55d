// SPDX-License-Identifier: GPL-2.0-only
// Transactions (S3.2, S3.3, S3.6, S4): sync calls and replies, oneways, nested calls, read
// buffers and looper spawning, between forked processes. Every expectation is the kernel's.
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
    Endpoint endpoint(DevicePath());
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
    Endpoint endpoint(DevicePath());
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

}  // namespace
}  // namespace cused::conformance
