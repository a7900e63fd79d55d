// SPDX-License-Identifier: GPL-2.0-only
// Failures (S2.1, S2.6, S2.14, S3.1, S3.6, S4.1, S4.6, S4.11, S5.3, S9.9): what a bad command,
// buffer, target or object answers, as the kernel answers it.
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "client/cused_differences.h"
#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/registration.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

// S4.1, S3.1, S3.6 "send-side failure", S2.14.
TEST(Failures, TransactionToUnknownHandleFailsAndStopsTheWrite_S4_1_S3_1_S2_14) {
  Endpoint endpoint(DevicePath());
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
  Endpoint endpoint(DevicePath());
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
    Endpoint endpoint(DevicePath());
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
  Endpoint endpoint(DevicePath());
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
  Endpoint endpoint(DevicePath());
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
  Endpoint endpoint(DevicePath());
  Commands commands;
  commands.code(BC_ENTER_LOOPER).code(_IO('c', 99)).code(BC_EXIT_LOOPER);
  binder_size_t consumed = 0;
  EXPECT_EQ(endpoint.write(commands, &consumed), -EINVAL);
  EXPECT_EQ(consumed, 4u);
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
  Endpoint endpoint(DevicePath());
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
  Endpoint endpoint(DevicePath());
  Commands commands;
  commands.code(_IO('c', 99)).code(BC_ENTER_LOOPER);
  binder_write_read bwr{};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(commands.data());
  bwr.write_size = commands.size();
  bwr.write_consumed = 4;  // past the unknown command, which would fail with EINVAL
  EXPECT_EQ(endpoint.device().write_read(bwr), 0);
  EXPECT_EQ(bwr.write_consumed, commands.size());
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
// fails with EPERM before delivery. Skipped where every fd is refused with that same EPERM.
TEST(Failures, FdToNodeThatDoesNotAcceptFdsFails_S5_3_S2_4) {
  CUSED_SKIP_WITHOUT_FD_PASSING(DevicePath());
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

// S3.6 "reply-side failure", S4.7, S2.14: a reply carrying an fd to a caller that did not set
// TF_ACCEPT_FDS fails on the caller's side only: the replier reads its completion and keeps an OK
// extended error; the caller reads its completion, then BR_FAILED_REPLY, and its extended error
// holds the replier's EPERM. Skipped where every fd is refused with that same EPERM.
TEST(Failures, ReplyWithFdToCallerWithoutAcceptFdsFailsOnTheCallerSide_S3_6_S4_7) {
  CUSED_SKIP_WITHOUT_FD_PASSING(DevicePath());
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
}  // namespace cused::conformance
