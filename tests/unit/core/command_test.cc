// SPDX-License-Identifier: GPL-2.0-only
// core/command.cc: the write half of BINDER_WRITE_READ (S3.1, binder_thread_write): where the
// command loop stops, the commands it refuses, the looper commands (S8) and BC_FREE_BUFFER (S9.9).
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

constexpr pid_t kPid = 100, kTid = 101;

// S3.1: an unknown command fails the ioctl with EINVAL, write_consumed at it, read_consumed 0,
// and no read happens.
TEST(Command, UnknownCommandStopsWriteWithEinval_S3_1) {
  Env env;
  Client client{env, kPid};
  Commands commands = Commands().u32(BC_ENTER_LOOPER);
  const std::size_t first = commands.bytes.size();
  commands.u32(0x12345678);
  Call call = client.write_read(kTid, commands, 256, false, /*read_consumed=*/8);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), -EINVAL);
  EXPECT_EQ(call.bwr().write_consumed, first);
  EXPECT_EQ(call.bwr().read_consumed, 0u);
}

// S3.1: BC_ATTEMPT_ACQUIRE and BC_ACQUIRE_RESULT were never supported.
TEST(Command, AttemptAcquireAndAcquireResultAreEinval_S3_1) {
  Env env;
  Client client{env, kPid};
  EXPECT_EQ(client.write(kTid, Commands().u32(BC_ATTEMPT_ACQUIRE).u64(0)).result(), -EINVAL);
  EXPECT_EQ(client.write(kTid, Commands().u32(BC_ACQUIRE_RESULT).u32(0)).result(), -EINVAL);
}

using CommandTest = World;

// S9.9 / S11.1: only a delivered buffer's exact start can be freed, and only once.
TEST_F(CommandTest, FreeBufferOnlyExactDeliveredOnce_S9_9) {
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY, Parcel().u64(1)));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer + 8));
  EXPECT_EQ(sm.proc().counts().buffers, 1u);
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));  // a soft error
}

// S8.2 / S8.3 / S8.4: looper flags.
TEST_F(CommandTest, LooperStateTransitions_S8) {
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

// S3.1: processing stops after a failed transaction; the remaining commands stay unconsumed.
TEST_F(CommandTest, WriteStopsAfterFailedTransaction_S3_1) {
  Commands commands = Commands().transaction(9, 1, 0);
  const std::size_t first = commands.bytes.size();
  commands.u32(BC_ENTER_LOOPER);
  Call call = client.write_read(kClientMain, commands);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), 0);
  EXPECT_EQ(call.bwr().write_consumed, first);
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
}

}  // namespace
}  // namespace cused::core::test
