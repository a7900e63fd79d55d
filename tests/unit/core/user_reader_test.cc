// SPDX-License-Identifier: GPL-2.0-only
// How the engine reads a sender's payload (S4.11 steps 1-7, binder_transaction's copy_from_user):
// the offsets and the data in one gathered read, and the payload a thread sent last time read
// ahead with its next commands (core/user_reader.h). Every test checks what the receiver gets,
// since a guess that went wrong must never be visible; the read counts are the daemon's system
// calls into the caller, the cost this exists to cut.
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

constexpr pid_t kSm = 100, kSmLooper = 101;
constexpr pid_t kClient = 200, kClientMain = 201;

binder_transaction_data call_with(const void* data, std::size_t size, std::uint32_t flags = 0,
                                  const binder_size_t* offsets = nullptr,
                                  std::size_t offsets_size = 0) {
  binder_transaction_data tr{};
  tr.code = 1;
  tr.flags = flags;
  tr.data_size = size;
  tr.offsets_size = offsets_size;
  tr.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(data);
  tr.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(offsets);
  return tr;
}

class PayloadReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_SET_CONTEXT_MGR), 0);
    ASSERT_EQ(sm.write(kSmLooper, Commands().u32(BC_ENTER_LOOPER)).result(), 0);
    binder_version version{};
    ASSERT_EQ(client.ioctl(kClientMain, BINDER_VERSION, version), 0);
  }

  // One sync call from the client's main thread with `tr` (the previous reply's buffer freed in
  // the same write, as libbinder does); the manager replies empty. Returns what the manager got.
  std::vector<std::uint32_t> call(const binder_transaction_data& tr, std::size_t* client_reads) {
    Commands commands;
    if (pending_reply_) commands.free_buffer(pending_reply_);
    Call sent = client.write_read(kClientMain, commands.transaction_raw(BC_TRANSACTION, tr));
    Call incoming = sm.read(kSmLooper);
    EXPECT_TRUE(incoming.done());
    binder_transaction_data got = incoming.tr();
    std::vector<std::uint32_t> words(got.data_size / sizeof(std::uint32_t));
    for (std::size_t i = 0; i < words.size(); ++i)
      words[i] = object_at<std::uint32_t>(got, i * sizeof(std::uint32_t));
    sm.write_read(kSmLooper, Commands().free_buffer(got.data.ptr.buffer).reply(0));
    EXPECT_TRUE(sent.done());
    EXPECT_EQ(sent.result(), 0);
    pending_reply_ = sent.tr().data.ptr.buffer;
    if (client_reads) *client_reads = sent.user_reads();
    return words;
  }

  Env env;
  Client sm{env, kSm};
  Client client{env, kClient};
  binder_uintptr_t pending_reply_ = 0;
};

// The libbinder pattern: each call's Parcel in the same buffer. From the second call on, the
// commands and the payload arrive in one read of the caller's memory, and the receiver always
// gets what the buffer held when the call was made.
TEST_F(PayloadReadTest, RepeatedCallFromOneBufferIsOneReadAndCarriesTheNewBytes_S4_11) {
  std::array<std::uint32_t, 6> payload{};
  for (std::uint32_t round = 0; round < 4; ++round) {
    payload.fill(round * 10);
    std::size_t reads = 0;
    std::vector<std::uint32_t> got = call(call_with(payload.data(), sizeof payload), &reads);
    EXPECT_EQ(got, std::vector<std::uint32_t>(payload.begin(), payload.end())) << round;
    EXPECT_EQ(reads, round == 0 ? 2u : 1u) << "round " << round;
  }
}

// A guess at the wrong address costs one more read and changes nothing the receiver sees.
TEST_F(PayloadReadTest, PayloadAtAnotherAddressIsReadWhereTheCommandSays_S4_11) {
  std::array<std::uint32_t, 3> first{1, 2, 3};
  std::array<std::uint32_t, 5> second{7, 8, 9, 10, 11};
  std::size_t reads = 0;
  EXPECT_EQ(call(call_with(first.data(), sizeof first), &reads),
            std::vector<std::uint32_t>(first.begin(), first.end()));
  EXPECT_EQ(call(call_with(second.data(), sizeof second), &reads),
            std::vector<std::uint32_t>(second.begin(), second.end()));
  EXPECT_EQ(reads, 2u);
  EXPECT_EQ(call(call_with(first.data(), sizeof first), &reads),
            std::vector<std::uint32_t>(first.begin(), first.end()));
}

// The guessed memory may be gone: the commands are still read, and the call goes through.
TEST_F(PayloadReadTest, GuessedPayloadUnmappedSinceDoesNotFailTheNextCall_S4_11) {
  std::array<std::uint32_t, 2> words{5, 6};
  EXPECT_EQ(call(call_with(words.data(), sizeof words), nullptr),
            (std::vector<std::uint32_t>{5, 6}));
  env.address_space.forbid(words.data(), sizeof words);  // the caller unmapped it since
  std::array<std::uint32_t, 2> other{8, 9};
  EXPECT_EQ(call(call_with(other.data(), sizeof other), nullptr),
            (std::vector<std::uint32_t>{8, 9}));
}

// A payload with objects: the offsets and all the data in one read (the kernel's copy_from_user
// per piece between objects), then translated as always.
TEST_F(PayloadReadTest, OffsetsAndDataBetweenObjectsAreOneRead_S4_11) {
  Parcel parcel;
  parcel.u32(1).binder(0x1000, 0x2000).u32(2).binder(0x3000, 0x4000).u32(3);
  std::size_t reads = 0;
  call(call_with(parcel.data.data(), parcel.data.size(), 0, parcel.offsets.data(),
                 parcel.offsets.size() * sizeof(binder_size_t)),
       &reads);
  EXPECT_EQ(reads, 2u) << "the commands, then offsets and data together";
}

// S4.7 / S9.10: a payload inside the sender's own binder mapping is read when the transaction
// runs, after the commands before it: here a TF_CLEAR_BUF buffer freed in the same write has
// been zeroed by then, and the kernel sends zeros. Read ahead with the commands, it would still
// hold the old bytes.
TEST_F(PayloadReadTest, PayloadInOwnMappingIsReadAfterTheCommandsBeforeIt_S4_11) {
  std::array<std::uint32_t, 2> secret{0xdead, 0xbeef};
  Call sent = client.write_read(
      kClientMain, Commands().transaction_raw(
                       BC_TRANSACTION, call_with(secret.data(), sizeof secret, TF_CLEAR_BUF)));
  Call incoming = sm.read(kSmLooper);
  binder_transaction_data received = incoming.tr();
  const void* in_mapping = reinterpret_cast<const void*>(received.data.ptr.buffer);
  // The manager replies from the received buffer itself: its looper's last payload is now in
  // its own mapping.
  sm.write_read(kSmLooper, Commands().reply_raw_from(in_mapping, sizeof secret));
  ASSERT_TRUE(sent.done());
  EXPECT_EQ(object_at<std::uint32_t>(sent.tr(), 0), 0xdeadu);

  Call again = client.write_read(
      kClientMain, Commands().free_buffer(sent.tr().data.ptr.buffer).transaction(0, 1, 0));
  Call second = sm.read(kSmLooper);
  ASSERT_TRUE(second.done());
  sm.write_read(kSmLooper, Commands()
                               .free_buffer(received.data.ptr.buffer)
                               .free_buffer(second.tr().data.ptr.buffer)
                               .reply_raw_from(in_mapping, sizeof secret));
  ASSERT_TRUE(again.done());
  binder_transaction_data reply = again.tr();
  ASSERT_EQ(reply.data_size, sizeof secret);
  EXPECT_EQ(object_at<std::uint32_t>(reply, 0), 0u) << "freed with TF_CLEAR_BUF before the reply";
  EXPECT_EQ(object_at<std::uint32_t>(reply, 4), 0u);
}

constexpr pid_t kPid = 100, kTid = 101;

// S3.1: an unreadable command or payload is EFAULT with write_consumed at the command; a
// payload may run past write_size, as get_user reads it.
TEST(UserReader, UnreadableCommandIsEfault_S3_1) {
  Env env;
  Client client{env, kPid};
  binder_write_read bwr{};
  bwr.write_buffer = 0x10;
  bwr.write_size = 4;
  Call bad = client.submit(kTid, bwr);
  ASSERT_TRUE(bad.done());
  EXPECT_EQ(bad.result(), -EFAULT);
  EXPECT_EQ(bad.bwr().write_consumed, 0u);

  // BC_ENTER_LOOPER, then BC_FREE_BUFFER whose payload is cut off by the end of readable memory.
  std::array<std::byte, 8192> memory{};
  std::byte* const end = memory.data() + 4096;
  env.address_space.forbid(end, 4096);
  std::uint32_t cmds[2] = {BC_ENTER_LOOPER, BC_FREE_BUFFER};
  std::memcpy(end - 8, cmds, 8);
  bwr = {};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(end - 8);
  bwr.write_size = 8;
  Call cut = client.submit(kTid, bwr);
  ASSERT_TRUE(cut.done());
  EXPECT_EQ(cut.result(), -EFAULT);
  EXPECT_EQ(cut.bwr().write_consumed, 4u);
}

}  // namespace
}  // namespace cused::core::test
