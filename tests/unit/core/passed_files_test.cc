// SPDX-License-Identifier: GPL-2.0-only
// Files in transactions: FD and FDA objects taken from the sender (S5.3, S5.4), installed in the
// reader at delivery (S5.6), dropped on every failure and teardown path (S5.7), FDA fds closed at
// BC_FREE_BUFFER (S5.8). Each proc here is served with a fake file table (tests/fake_files.h), as
// `cused run` serves its callers; Env::passed_files counts the files the driver holds.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <set>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

// A parent buffer with two fd slots between other data.
struct ArrayParent {
  std::uint64_t head;
  std::uint32_t fds[2];
  std::uint64_t tail;
};
static_assert(sizeof(ArrayParent) == 24);
constexpr binder_size_t kSlots = offsetof(ArrayParent, fds);
// Parcels put their PTR after 8 bytes of data: an object at offset 0 can never be a parent (the
// kernel's binder_validate_fixup reads last_fixup_obj_off 0 as "nothing to fix up in").
constexpr binder_size_t kPtrAt = 8;

class FdTest : public World {
 protected:
  // Which procs have a file table; the others are FUSE callers.
  virtual bool with_files(const Client&) const { return true; }

  void SetUp() override {
    for (Client* who : {&sm, &client, &server})
      if (with_files(*who)) who->give_files();
    // The warm-up ioctls carry the tables: from then on these procs can receive fds.
    World::SetUp();
    if (client.files()) {
      ASSERT_EQ(client.files()->open("client-a"), 3);
      ASSERT_EQ(client.files()->open("client-b"), 4);
    }
    if (server.files()) {
      ASSERT_EQ(server.files()->open("server-own"), 3);
    }
    if (sm.files()) {
      ASSERT_EQ(sm.files()->open("sm-own"), 3);
    }
  }

  // Whatever was in flight is torn down with the procs: no PassedFile may survive.
  void TearDown() override {
    for (Client* who : {&sm, &client, &server}) who->release();
    EXPECT_EQ(live(), 0) << "a PassedFile outlived its transaction";
  }

  long live() const { return env.passed_files->load(); }

  // The client's handle to a server node that accepts fds (S5.3).
  std::uint32_t accepting_handle() {
    return fetch(publish(kServicePtr, kServiceCookie, FLAT_BINDER_FLAG_ACCEPTS_FDS));
  }

  Call oneway(std::uint32_t handle, const Parcel& parcel, std::uint32_t flags = 0,
              std::uint32_t code = 1) {
    return client.write_read(kClientMain,
                             Commands().transaction(handle, code, TF_ONE_WAY | flags, parcel));
  }
  Call oneway_sg(std::uint32_t handle, const Parcel& parcel, binder_size_t buffers_size) {
    return client.write_read(
        kClientMain, Commands().transaction_sg(handle, 1, TF_ONE_WAY, parcel, buffers_size));
  }
  // A oneway of `parent` as a PTR with an FDA of `num_fds` at its fd slots.
  Call oneway_array(std::uint32_t handle, const ArrayParent& parent, binder_size_t num_fds) {
    Parcel parcel;
    parcel.u64(0).ptr(&parent, sizeof parent).fda(num_fds, 0, kSlots);
    return oneway_sg(handle, parcel, sizeof parent);
  }
  // The same, read by the server: its copy of the parent.
  ArrayParent deliver_array(std::uint32_t handle, const ArrayParent& parent, binder_size_t num_fds,
                            binder_transaction_data& tr) {
    EXPECT_EQ(oneway_array(handle, parent, num_fds).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
    EXPECT_EQ(live(), static_cast<long>(num_fds)) << "held until delivery";
    tr = read_now(server, kServerLooper).tr();
    return pointee<ArrayParent>(tr, kPtrAt);
  }

  // What a delivered buffer's PTR object at `offset` points at.
  template <typename T>
  static T pointee(const binder_transaction_data& tr, binder_size_t offset) {
    auto ptr = object_at<binder_buffer_object>(tr, offset);
    T value;
    std::memcpy(&value, reinterpret_cast<const void*>(ptr.buffer), sizeof value);
    return value;
  }

  void expect_failed_send(const Call& call, std::int32_t errno_value) {
    EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
    binder_extended_error ee = extended_error(client, kClientMain);
    EXPECT_EQ(ee.command, BR_FAILED_REPLY);
    EXPECT_EQ(ee.param, errno_value);
  }
};

// S5.3 / S5.6: an FD object arrives as a new fd of the reader, the lowest free one, naming the
// sender's file. Until delivery the target buffer holds 0 in the whole 8-byte fd field; cookie
// and pad_flags pass unchanged; once installed the driver holds nothing.
TEST_F(FdTest, FdObjectArrivesAsNewFdOfTheReader_S5_3_S5_6) {
  const std::uint32_t handle = accepting_handle();
  binder_fd_object fdo{};
  fdo.hdr.type = BINDER_TYPE_FD;
  fdo.pad_flags = 0x5a5a;
  fdo.pad_binder = (std::uint64_t{0xdeadbeef} << 32) | 3;
  fdo.cookie = 0xc0c0;
  EXPECT_EQ(oneway(handle, Parcel().u64(7).object(fdo)).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(live(), 1) << "held until delivery";
  binder_fd_object queued{};
  std::memcpy(&queued, server.buffers().data() + 8, sizeof queued);
  EXPECT_EQ(queued.pad_binder, 0u) << "no fd in the target before delivery";

  binder_transaction_data tr = read_now(server, kServerLooper).tr();
  ASSERT_EQ(tr.data.ptr.buffer, reinterpret_cast<binder_uintptr_t>(server.buffers().data()));
  auto got = object_at<binder_fd_object>(tr, 8);
  EXPECT_EQ(got.hdr.type, BINDER_TYPE_FD);
  EXPECT_EQ(got.pad_binder, 4u) << "the server's lowest free fd, upper half 0";
  EXPECT_EQ(got.pad_flags, 0x5a5au);
  EXPECT_EQ(got.cookie, 0xc0c0u);
  EXPECT_EQ(server.files()->name_of(4), "client-a");
  EXPECT_EQ(client.files()->name_of(3), "client-a") << "the sender keeps its fd";
  EXPECT_EQ(live(), 0);
}

// S5.4 / S5.6: the fds of an FDA are read from the sender's parent buffer and arrive as new fds
// written into the parent's copy at parent_offset; the bytes around them are the sender's, the FDA
// object itself is delivered unchanged.
TEST_F(FdTest, FdArrayFdsArePatchedAtParentOffset_S5_4_S5_6) {
  const std::uint32_t handle = accepting_handle();
  binder_transaction_data tr;
  auto got = deliver_array(handle, ArrayParent{0x1111, {4, 3}, 0x2222}, 2, tr);
  EXPECT_EQ(got.head, 0x1111u);
  EXPECT_EQ(got.tail, 0x2222u);
  EXPECT_EQ(got.fds[0], 4u);
  EXPECT_EQ(got.fds[1], 5u);
  EXPECT_EQ(server.files()->name_of(4), "client-b");
  EXPECT_EQ(server.files()->name_of(5), "client-a");
  auto fda = object_at<binder_fd_array_object>(tr, kPtrAt + sizeof(binder_buffer_object));
  EXPECT_EQ(fda.hdr.type, BINDER_TYPE_FDA);
  EXPECT_EQ(fda.num_fds, 2u);
  EXPECT_EQ(fda.parent, 0u);
  EXPECT_EQ(fda.parent_offset, kSlots);
  EXPECT_EQ(live(), 0);
}

// S5.4 / S11.15: an FDA of no fds is accepted and its parent copied as it is; nothing is taken or
// installed.
TEST_F(FdTest, FdArrayOfNoFdsPassesTheParentUnchanged_S5_4_S11_15) {
  const std::uint32_t handle = accepting_handle();
  binder_transaction_data tr;
  auto got = deliver_array(handle, ArrayParent{1, {77, 78}, 2}, 0, tr);
  EXPECT_EQ(got.fds[0], 77u);
  EXPECT_EQ(got.fds[1], 78u);
  EXPECT_EQ(client.files()->taken(), 0);
  EXPECT_EQ(server.files()->open_count(), 4u);
  write_ok(server, kServerLooper, Commands().free_buffer(tr.data.ptr.buffer));
  EXPECT_TRUE(server.files()->close_requests().empty());
}

// S5.3 / S2.4: the plain context manager's node has no ACCEPTS_FDS: an FD or an FDA fails with
// EPERM before any file is taken.
TEST_F(FdTest, FdToNodeWithoutAcceptsFdsTakesNothing_S5_3_S5_4) {
  expect_failed_send(oneway(0, Parcel().fd(3)), -EPERM);
  expect_failed_send(oneway_array(0, ArrayParent{0, {3, 4}, 0}, 2), -EPERM);
  EXPECT_EQ(client.files()->taken(), 0);
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
}

// S3.6 reply-side failure / S4.7: a reply carrying an fd to a caller that did not set
// TF_ACCEPT_FDS fails on the caller's side (BR_FAILED_REPLY, its extended error EPERM), the
// replier hears only its completion, and nothing was taken from the replier.
TEST_F(FdTest, ReplyWithFdToCallerWithoutAcceptFdsFails_S3_6_S4_7) {
  expect_reply_failure(Parcel().fd(3), BR_FAILED_REPLY, -EPERM);
  EXPECT_EQ(sm.files()->taken(), 0);
  EXPECT_EQ(client.proc().counts().buffers, 0u);
}

// S4.7 / S5.6: with TF_ACCEPT_FDS on the call, the reply's fd arrives in the caller.
TEST_F(FdTest, ReplyWithFdReachesCallerThatAcceptsFds_S4_7_S5_6) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, TF_ACCEPT_FDS));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(
      sm.write_read(kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply(0, Parcel().fd(3)))
          .names(),
      "BR_NOOP BR_TRANSACTION_COMPLETE");
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
  EXPECT_EQ(object_at<binder_fd_object>(call.tr(), 0).fd, 5u);
  EXPECT_EQ(client.files()->name_of(5), "sm-own");
}

// S5.3: an fd the sender does not have is EBADF, in an FD object or in an FDA.
TEST_F(FdTest, UnknownFdFailsWithEbadf_S5_3_S5_4) {
  const std::uint32_t handle = accepting_handle();
  expect_failed_send(oneway(handle, Parcel().fd(42)), -EBADF);
  expect_failed_send(oneway_array(handle, ArrayParent{0, {3, 42}, 0}, 2), -EBADF);
  EXPECT_EQ(live(), 0) << "the first fd of the array was dropped again";
  EXPECT_EQ(server.proc().counts().buffers, 0u);
}

// S5.7 / S11.12: a send that fails after k files were taken drops exactly those k, and the
// target installs none: at a bad object after an FDA of three, and at the third fd of an FDA.
TEST_F(FdTest, FailedSendDropsTheFilesTakenSoFar_S5_7_S11_12) {
  const std::uint32_t handle = accepting_handle();
  std::array<std::uint32_t, 4> fds{3, 4, 3, 0};
  Parcel then_bad_handle;
  then_bad_handle.u64(0).ptr(fds.data(), sizeof fds).fda(3, 0, 0).handle(42);
  expect_failed_send(oneway_sg(handle, then_bad_handle, sizeof fds), -EINVAL);
  EXPECT_EQ(client.files()->taken(), 3);
  EXPECT_EQ(live(), 0);
  fds[2] = 99;
  Parcel bad_third;
  bad_third.u64(0).ptr(fds.data(), sizeof fds).fda(3, 0, 0);
  expect_failed_send(oneway_sg(handle, bad_third, sizeof fds), -EBADF);
  EXPECT_EQ(client.files()->taken(), 5);
  EXPECT_EQ(live(), 0);
  EXPECT_EQ(server.files()->open_count(), 4u);
  EXPECT_EQ(server.proc().counts().buffers, 0u);
}

// S5.4: a hundred fds in one array, all of the same file: a hundred new fds in the reader, closed
// again by BC_FREE_BUFFER (S5.8).
TEST_F(FdTest, HundredFdsInOneParcel_S5_4_S5_8) {
  const std::uint32_t handle = accepting_handle();
  std::array<std::uint32_t, 100> fds;
  fds.fill(3);
  Parcel parcel;
  parcel.u64(0).ptr(fds.data(), sizeof fds).fda(fds.size(), 0, 0);
  EXPECT_EQ(oneway_sg(handle, parcel, sizeof fds).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(live(), 100);
  binder_transaction_data tr = read_now(server, kServerLooper).tr();
  auto got = pointee<std::array<std::uint32_t, 100>>(tr, kPtrAt);
  std::set<std::uint32_t> distinct(got.begin(), got.end());
  EXPECT_EQ(distinct.size(), 100u);
  EXPECT_EQ(*distinct.begin(), 4u);
  EXPECT_EQ(*distinct.rbegin(), 103u);
  for (std::uint32_t fd : got) EXPECT_EQ(server.files()->name_of(fd), "client-a") << fd;
  EXPECT_EQ(live(), 0);
  write_ok(server, kServerLooper, Commands().free_buffer(tr.data.ptr.buffer));
  EXPECT_EQ(server.files()->close_requests().size(), 100u);
  EXPECT_EQ(server.files()->open_count(), 4u);
}

// S5.4 / S5.8: BC_FREE_BUFFER closes the fds installed for an FDA, in the freeing process, and the
// same ioctl's read returns at once (the kernel's deferred close needs the thread back in
// userspace); the fd of an FD object is the receiver's and stays open. A buffer with only an FD
// object closes nothing, and its free's read waits as usual.
TEST_F(FdTest, FreeBufferClosesFdaFdsButNotFdFds_S5_4_S5_8) {
  const std::uint32_t handle = accepting_handle();
  ArrayParent parent{0, {3, 4}, 0};
  Parcel parcel;
  parcel.fd(3).ptr(&parent, sizeof parent).fda(2, 1, kSlots);
  EXPECT_EQ(oneway_sg(handle, parcel, sizeof parent).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  binder_transaction_data tr = read_now(server, kServerLooper).tr();
  EXPECT_EQ(object_at<binder_fd_object>(tr, 0).fd, 4u);
  auto got = pointee<ArrayParent>(tr, sizeof(binder_fd_object));
  EXPECT_EQ(got.fds[0], 5u);
  EXPECT_EQ(got.fds[1], 6u);
  Call freed = server.write_read(kServerLooper, Commands().free_buffer(tr.data.ptr.buffer));
  ASSERT_TRUE(freed.done()) << "the read after the close must not wait";
  EXPECT_EQ(freed.names(), "BR_NOOP");
  EXPECT_EQ(server.files()->close_requests(), (std::vector<int>{5, 6}));
  EXPECT_EQ(server.files()->name_of(4), "client-a");

  EXPECT_EQ(oneway(handle, Parcel().fd(4)).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  binder_transaction_data only_fd = read_now(server, kServerOther).tr();
  EXPECT_EQ(object_at<binder_fd_object>(only_fd, 0).fd, 5u);
  Call waits = server.write_read(kServerOther, Commands().free_buffer(only_fd.data.ptr.buffer));
  EXPECT_FALSE(waits.done());
  EXPECT_EQ(server.files()->close_requests().size(), 2u);
  EXPECT_EQ(server.files()->name_of(5), "client-b");
}

// S5.6: the reader cannot take the second of two fds. The call fails back to its sender with
// BR_FAILED_REPLY (its extended error untouched), the fd installed first is closed again, the
// buffer is freed, and the reader, which saw nothing, reads on and takes the next call.
TEST_F(FdTest, InstallFailureFailsCallBackToSender_S5_6) {
  const std::uint32_t handle = accepting_handle();
  server.files()->fail_install(2);
  Call call =
      client.write_read(kClientMain, Commands().transaction(handle, 1, 0, Parcel().fd(3).fd(4)));
  Call read = server.read(kServerLooper);
  EXPECT_FALSE(read.done()) << "the reader saw nothing and waits on";
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).command, BR_OK);
  EXPECT_EQ(server.files()->close_requests(), std::vector<int>{4});
  EXPECT_FALSE(server.files()->name_of(4).has_value());
  EXPECT_EQ(server.proc().counts().buffers, 0u);
  EXPECT_EQ(live(), 0);

  Call next = client.write_read(kClientMain, Commands().transaction(handle, 2, 0, Parcel().fd(3)));
  ASSERT_TRUE(read.done());
  binder_transaction_data tr = read.tr();
  EXPECT_EQ(tr.code, 2u);
  EXPECT_EQ(object_at<binder_fd_object>(tr, 0).fd, 4u);
  write_ok(server, kServerLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
  EXPECT_EQ(next.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
}

// S5.6 / S4.5: a oneway whose fds cannot be installed is dropped without a word; its buffer going
// releases the next oneway of the node, which the same read delivers.
TEST_F(FdTest, InstallFailureDropsOneway_S5_6_S4_5) {
  const std::uint32_t handle = accepting_handle();
  server.files()->fail_install(2);
  EXPECT_EQ(
      client
          .write_read(kClientMain, Commands()
                                       .transaction(handle, 1, TF_ONE_WAY, Parcel().fd(3).fd(4))
                                       .transaction(handle, 2, TF_ONE_WAY, Parcel().fd(4)))
          .names(),
      "BR_NOOP BR_TRANSACTION_COMPLETE BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(live(), 3);
  binder_transaction_data tr = read_now(server, kServerLooper).tr();
  EXPECT_EQ(tr.code, 2u);
  EXPECT_EQ(object_at<binder_fd_object>(tr, 0).fd, 4u) << "the fd closed again is free";
  EXPECT_EQ(server.files()->name_of(4), "client-b");
  EXPECT_EQ(server.files()->close_requests(), std::vector<int>{4});
  EXPECT_EQ(live(), 0);
}

// S5.6: a reply whose fds the caller cannot take becomes BR_FAILED_REPLY for the caller instead
// of BR_REPLY; the replier only heard its completion; the buffer is freed.
TEST_F(FdTest, InstallFailureTurnsReplyIntoFailedReply_S5_6) {
  client.files()->fail_install(2);
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, TF_ACCEPT_FDS));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(sm.write_read(kSmLooper,
                          Commands().free_buffer(tr.data.ptr.buffer).reply(0, Parcel().fd(3).fd(0)))
                .names(),
            "BR_NOOP BR_TRANSACTION_COMPLETE");
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_FAILED_REPLY");
  EXPECT_EQ(client.files()->close_requests(), std::vector<int>{5});
  EXPECT_EQ(client.files()->open_count(), 5u);
  EXPECT_EQ(client.proc().counts().buffers, 0u);
  EXPECT_EQ(live(), 0);
}

// A cused difference (docs/protocol.md): the kernel reserves every fd before it installs any, so
// a failed fixup leaves none behind; cused installs one at a time and closes the earlier ones
// again, which a frontend that cannot close another process's fd refuses (-ENOSYS): that fd stays
// open in the reader.
TEST_F(FdTest, InstallFailureWithCloseRefusedLeavesEarlierFdOpen_S5_6) {
  const std::uint32_t handle = accepting_handle();
  server.files()->fail_install(2);
  server.files()->refuse_close();
  EXPECT_EQ(oneway(handle, Parcel().fd(3).fd(4)).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  Call read = server.read(kServerLooper);
  EXPECT_FALSE(read.done());
  EXPECT_EQ(server.files()->close_requests(), std::vector<int>{4});
  EXPECT_EQ(server.files()->name_of(4), "client-a");
  EXPECT_EQ(live(), 0);
}

// S5.3: a received fd is the receiver's own: passed on in a reply to a third process's call, it
// arrives there as that process's fd for the same file.
TEST_F(FdTest, ReceivedFdPassedOnToAThirdProc_S5_3) {
  const std::uint32_t sm_handle =
      publish(kServicePtr, kServiceCookie, FLAT_BINDER_FLAG_ACCEPTS_FDS);
  const std::uint32_t handle = fetch(sm_handle);
  EXPECT_EQ(oneway(handle, Parcel().fd(3)).names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  binder_transaction_data first = read_now(server, kServerLooper).tr();
  ASSERT_EQ(object_at<binder_fd_object>(first, 0).fd, 4u);
  write_ok(server, kServerLooper, Commands().free_buffer(first.data.ptr.buffer));

  Call call = sm.write_read(kSmOther, Commands().transaction(sm_handle, 2, TF_ACCEPT_FDS));
  binder_transaction_data tr = read_now(server, kServerLooper).tr();
  write_ok(server, kServerLooper,
           Commands().free_buffer(tr.data.ptr.buffer).reply(0, Parcel().fd(4)));
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
  EXPECT_EQ(object_at<binder_fd_object>(call.tr(), 0).fd, 4u);
  EXPECT_EQ(sm.files()->name_of(4), "client-a");
  EXPECT_EQ(server.files()->name_of(4), "client-a") << "the replier keeps its fd";
}

// S1.9 / S5.7: the target dies with fds in flight (a call in its queue, a oneway being read and
// one waiting in the node's queue): the caller gets BR_DEAD_REPLY, every held file is dropped,
// none installed.
TEST_F(FdTest, UndeliveredFdsDroppedWhenTargetDies_S1_9_S5_7) {
  const std::uint32_t handle = accepting_handle();
  Call call =
      client.write_read(kClientMain, Commands().transaction(handle, 1, 0, Parcel().fd(3).fd(4)));
  EXPECT_FALSE(call.done());
  EXPECT_EQ(client
                .write_read(kClientOther, Commands()
                                              .transaction(handle, 2, TF_ONE_WAY, Parcel().fd(3))
                                              .transaction(handle, 3, TF_ONE_WAY, Parcel().fd(4)))
                .names(),
            "BR_NOOP BR_TRANSACTION_COMPLETE BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(live(), 4);
  server.release();
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_DEAD_REPLY");
  EXPECT_EQ(live(), 0);
  EXPECT_EQ(server.files()->open_count(), 4u);
}

// S2.6: a reply carrying an fd is queued to a caller thread that exits before reading it: the
// file is dropped, nothing installed, the buffer freed.
TEST_F(FdTest, UndeliveredReplyFdDroppedWhenCallerThreadExits_S2_6) {
  write_ok(client, kClientMain, Commands().transaction(0, 1, TF_ACCEPT_FDS));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(
      sm.write_read(kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply(0, Parcel().fd(3)))
          .names(),
      "BR_NOOP BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(live(), 1);
  EXPECT_EQ(client.ioctl(kClientMain, BINDER_THREAD_EXIT), 0);
  EXPECT_EQ(live(), 0);
  EXPECT_EQ(client.files()->open_count(), 5u);
  EXPECT_EQ(client.proc().counts().buffers, 0u);
}

// S4.13: a TF_UPDATE_TXN oneway that supersedes an older one waiting for a frozen proc drops the
// older one's files; the one in flight and the latest arrive after the thaw.
TEST_F(FdTest, SupersededOnewayDropsItsFiles_S4_13) {
  const std::uint32_t handle = accepting_handle();
  binder_freeze_info freeze{static_cast<__u32>(kServer), 1, 0};
  ASSERT_EQ(client.ioctl(kClientOther, BINDER_FREEZE, freeze), 0);
  for (int i = 0; i < 3; i++)
    ASSERT_EQ(oneway(handle, Parcel().fd(3), TF_UPDATE_TXN).names(),
              "BR_NOOP BR_TRANSACTION_PENDING_FROZEN");
  EXPECT_EQ(live(), 2);
  freeze.enable = 0;
  ASSERT_EQ(client.ioctl(kClientOther, BINDER_FREEZE, freeze), 0);
  for (std::uint32_t fd : {4u, 5u}) {
    binder_transaction_data tr = read_now(server, kServerLooper).tr();
    EXPECT_EQ(object_at<binder_fd_object>(tr, 0).fd, fd);
    write_ok(server, kServerLooper, Commands().free_buffer(tr.data.ptr.buffer));
  }
  EXPECT_EQ(live(), 0);
}

// The client is a FUSE caller: it has no file table to take fds from (S5.3; docs/binderfs.md).
class FdFromFuseCallerTest : public FdTest {
 protected:
  bool with_files(const Client& who) const override { return &who != &client; }
};

TEST_F(FdFromFuseCallerTest, SenderWithoutFileTableFailsWithEperm_S5_3) {
  const std::uint32_t handle = accepting_handle();
  expect_failed_send(oneway(handle, Parcel().fd(0)), -EPERM);
  expect_failed_send(oneway_array(handle, ArrayParent{0, {0, 1}, 0}, 2), -EPERM);
  EXPECT_EQ(server.files()->open_count(), 4u);
}

// The server is a FUSE caller: nothing could install fds in it, so none may be sent to it.
class FdToFuseServerTest : public FdTest {
 protected:
  bool with_files(const Client& who) const override { return &who != &server; }
};

TEST_F(FdToFuseServerTest, TargetThatCannotReceiveFailsWithEperm_S5_3) {
  const std::uint32_t handle = accepting_handle();
  expect_failed_send(oneway(handle, Parcel().fd(3)), -EPERM);
  EXPECT_EQ(client.files()->taken(), 0);
  EXPECT_EQ(server.proc().counts().buffers, 0u);
}

// Without a file table on either side (FUSE callers throughout).
using FdWithoutFileTablesTest = World;

// S5.3: FUSE callers have no file table the driver could take fds from or install them in, so
// an fd fails as one to a target that does not accept fds, even to a node with ACCEPTS_FDS
// (passed_files_test.cc has fds between callers that have one).
TEST_F(FdWithoutFileTablesTest, FdObjectWithoutFileTablesFailsWithEperm_S5_3) {
  const std::uint32_t handle =
      fetch(publish(kServicePtr, kServiceCookie, FLAT_BINDER_FLAG_ACCEPTS_FDS));
  Call call =
      client.write_read(kClientMain, Commands().transaction(handle, 1, TF_ONE_WAY, Parcel().fd(0)));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -EPERM);
}

}  // namespace
}  // namespace cused::core::test
