// SPDX-License-Identifier: GPL-2.0-only
// Object translation (S5) and the offsets validation order (S4.11).
#include <gtest/gtest.h>

#include <array>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using ObjectTest = World;

// S5.1: a BINDER becomes a HANDLE (lowest desc >= 1) in the target, cookie 0; the sender hears
// BR_INCREFS and BR_ACQUIRE before its completion (S3.5).
TEST_F(ObjectTest, BinderBecomesHandleAndSenderIsAskedForRefs_S5_1) {
  std::uint32_t handle = publish();
  EXPECT_EQ(handle, 1u);
  auto counts = server.proc().node_counts(kServicePtr);
  ASSERT_TRUE(counts);
  EXPECT_TRUE(counts->has_strong_ref);
  EXPECT_TRUE(counts->has_weak_ref);
  EXPECT_EQ(counts->internal_strong_refs, 1);
  EXPECT_EQ(counts->local_strong_refs, 0);  // the driver's +1 went with BC_ACQUIRE_DONE (S6.6)
  EXPECT_EQ(counts->refs, 1u);
  EXPECT_EQ(sm.proc().ref_counts(handle), (std::pair<std::uint32_t, std::uint32_t>{1, 1}));
}

// S5.2: a handle passed on gives the third proc its own handle, which reaches the owner's node.
TEST_F(ObjectTest, HandlePassedOnReachesTheOwner_S5_2) {
  std::uint32_t handle = fetch(publish());
  Call call = client.write_read(kClientMain, Commands().transaction(handle, 9, 0));
  binder_transaction_data tr = read_now(server, kServerLooper).tr();
  EXPECT_EQ(tr.target.ptr, kServicePtr);
  EXPECT_EQ(tr.cookie, kServiceCookie);
  EXPECT_EQ(tr.code, 9u);
  EXPECT_EQ(tr.sender_pid, kClient);
  write_ok(server, kServerLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
}

// S5.2: a handle coming home becomes the owner's own object again, with its ptr and cookie.
TEST_F(ObjectTest, HandleComingHomeBecomesBinder_S5_2) {
  std::uint32_t handle = publish();
  Call call = server.write_read(kServerOther, Commands().transaction(0, 4, 0));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  write_ok(sm, kSmLooper,
           Commands().free_buffer(tr.data.ptr.buffer).reply(0, Parcel().handle(handle)));
  binder_transaction_data reply = call.tr();
  auto obj = object_at<flat_binder_object>(reply, 0);
  EXPECT_EQ(obj.hdr.type, BINDER_TYPE_BINDER);
  EXPECT_EQ(obj.binder, kServicePtr);
  EXPECT_EQ(obj.cookie, kServiceCookie);
  // S6.7: the buffer holds a local strong count on the node until it is freed.
  EXPECT_EQ(server.proc().node_counts(kServicePtr)->local_strong_refs, 1);
  write_ok(server, kServerOther, Commands().free_buffer(reply.data.ptr.buffer));
  EXPECT_EQ(server.proc().node_counts(kServicePtr)->local_strong_refs, 0);
}

// S5.8 / S6.5: the refs translation made last only until BC_FREE_BUFFER; losing the last one
// sends BR_RELEASE then BR_DECREFS to the owner (on its proc queue).
TEST_F(ObjectTest, FreeingUnreferencedBufferReleasesTheNode_S5_8) {
  Call sent = server.write_read(
      kServerLooper,
      Commands().transaction(0, 1, TF_ONE_WAY, Parcel().binder(kServicePtr, kServiceCookie)));
  write_ok(server, kServerLooper,
           Commands()
               .done(BC_INCREFS_DONE, kServicePtr, kServiceCookie)
               .done(BC_ACQUIRE_DONE, kServicePtr, kServiceCookie));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(sm.proc().counts().refs, 1u);
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));
  EXPECT_EQ(sm.proc().counts().refs, 0u);
  Call released = read_now(server, kServerLooper);
  EXPECT_EQ(released.names(), "BR_NOOP BR_RELEASE BR_DECREFS");
  EXPECT_EQ(released.items()[1].ptr_cookie().ptr, kServicePtr);
  EXPECT_EQ(released.items()[2].ptr_cookie().cookie, kServiceCookie);
  EXPECT_FALSE(server.proc().node_counts(kServicePtr));  // S6.5: the node is gone
}

// S5.1: an existing node with another cookie is -EINVAL.
TEST_F(ObjectTest, BinderWithWrongCookieFails_S5_1) {
  publish();
  Call call = server.write_read(
      kServerOther,
      Commands().transaction(0, 1, TF_ONE_WAY, Parcel().binder(kServicePtr, kServiceCookie + 1)));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(server, kServerOther).param, -EINVAL);
}

// S5.1 / S4.1: a WEAK_BINDER gives a weak handle, which cannot be called.
TEST_F(ObjectTest, WeakBinderGivesUncallableWeakHandle_S5_1) {
  server.write_read(
      kServerLooper,
      Commands().transaction(0, 1, TF_ONE_WAY, Parcel().weak_binder(kServicePtr, kServiceCookie)));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  auto obj = object_at<flat_binder_object>(tr, 0);
  EXPECT_EQ(obj.hdr.type, BINDER_TYPE_WEAK_HANDLE);
  EXPECT_EQ(sm.proc().ref_counts(obj.handle), (std::pair<std::uint32_t, std::uint32_t>{0, 1}));
  Call call = sm.write_read(kSmOther, Commands().transaction(obj.handle, 1, 0));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
}

// S5.2: a HANDLE needs a strong ref in the sender; an unknown handle is -EINVAL.
TEST_F(ObjectTest, UnknownHandleObjectFails_S5_2) {
  Call call =
      client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY, Parcel().handle(7)));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -EINVAL);
}

// S5.7 / S11.12: a failure at the second object undoes the first: no ref stays in the target,
// the sender's node goes away again without a word to userspace.
TEST_F(ObjectTest, FailureUnwindsEarlierObjects_S5_7) {
  Call call = server.write_read(
      kServerLooper,
      Commands().transaction(0, 1, TF_ONE_WAY,
                             Parcel().binder(kServicePtr, kServiceCookie).handle(42)));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(sm.proc().counts().refs, 0u);
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
  EXPECT_FALSE(server.proc().node_counts(kServicePtr));
}

// S5.5: PTR payloads land in the sg area, the object points there, and a child's address is
// patched into its parent's copy.
TEST_F(ObjectTest, ScatterGatherCopiesAndFixesUpParents_S5_5) {
  struct Root {
    std::uint64_t child;
    std::uint64_t marker;
  } root{0xdeadbeef, 0x1111};
  std::array<std::uint32_t, 3> child{7, 8, 9};
  Parcel parcel;
  parcel.u64(0);  // keep the first object off offset 0 (the kernel's "no parent yet" value)
  parcel.ptr(&root, sizeof root);
  parcel.ptr(child.data(), sizeof child, /*parent=*/0, /*parent_offset=*/0);
  Call sent =
      client.write_read(kClientMain, Commands().transaction_sg(0, 5, TF_ONE_WAY, parcel, 64));
  EXPECT_EQ(sent.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  auto root_obj = object_at<binder_buffer_object>(tr, 8);
  auto child_obj = object_at<binder_buffer_object>(tr, 8 + sizeof(binder_buffer_object));
  const auto sg_start = tr.data.ptr.buffer + 8 + 2 * sizeof(binder_buffer_object) + 16;
  EXPECT_EQ(root_obj.buffer, sg_start);
  EXPECT_EQ(child_obj.buffer, sg_start + 16);
  Root copied;
  std::memcpy(&copied, reinterpret_cast<const void*>(root_obj.buffer), sizeof copied);
  EXPECT_EQ(copied.child, child_obj.buffer);  // fixed up, not the sender's pointer
  EXPECT_EQ(copied.marker, 0x1111u);
  std::array<std::uint32_t, 3> child_copy;
  std::memcpy(child_copy.data(), reinterpret_cast<const void*>(child_obj.buffer), sizeof child);
  EXPECT_EQ(child_copy, child);
}

// S5.5: a PTR longer than the sg area is -EINVAL; with plain BC_TRANSACTION only empty ones pass.
TEST_F(ObjectTest, PtrLargerThanSgAreaFails_S5_5) {
  std::uint64_t payload = 1;
  Call call = client.write_read(
      kClientMain,
      Commands().transaction(0, 5, TF_ONE_WAY, Parcel().u64(0).ptr(&payload, sizeof payload)));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -EINVAL);
}

// S5.5 ordering rule: a fixup may not go below an earlier sibling's slot in the same parent.
TEST_F(ObjectTest, OutOfOrderFixupFails_S5_5) {
  std::array<std::uint64_t, 4> root{};
  std::uint64_t a = 1, b = 2;
  Parcel parcel;
  parcel.u64(0);
  parcel.ptr(root.data(), sizeof root);
  parcel.ptr(&a, sizeof a, 0, 16);
  parcel.ptr(&b, sizeof b, 0, 0);  // below the slot at 16
  Call call =
      client.write_read(kClientMain, Commands().transaction_sg(0, 5, TF_ONE_WAY, parcel, 64));
  EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -EINVAL);
}

// S5.5: a parent must be a PTR processed earlier; its slot must fit inside it.
TEST_F(ObjectTest, PtrParentMustBeEarlierPtrWithRoom_S5_5) {
  std::uint64_t root = 0, child = 1;
  for (auto [parent, parent_offset] : {std::pair<binder_size_t, binder_size_t>{1, 0}, {0, 4}}) {
    Parcel parcel;
    parcel.u64(0);
    parcel.ptr(&root, sizeof root);
    parcel.ptr(&child, sizeof child, parent, parent_offset);
    Call call =
        client.write_read(kClientMain, Commands().transaction_sg(0, 5, TF_ONE_WAY, parcel, 32));
    EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY") << parent << "/" << parent_offset;
    EXPECT_EQ(extended_error(client, kClientMain).param, -EINVAL);
  }
}

// S5.4 / S11.15: an FDA with no fds only has its parent validated; a bad parent is -EINVAL.
TEST_F(ObjectTest, FdArrayParentValidation_S5_4) {
  std::array<std::uint32_t, 2> fds{0, 1};
  Parcel good;
  good.u64(0).ptr(fds.data(), sizeof fds).fda(0, 0, 0);
  EXPECT_EQ(
      client.write_read(kClientMain, Commands().transaction_sg(0, 5, TF_ONE_WAY, good, sizeof fds))
          .names(),
      "BR_NOOP BR_TRANSACTION_COMPLETE");
  Parcel bad;
  bad.u64(0).fda(0, 0, 0);
  EXPECT_EQ(client.write_read(kClientMain, Commands().transaction(0, 5, TF_ONE_WAY, bad)).names(),
            "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -EINVAL);
  // Fds in the array fail as fds do (S5.3).
  Parcel with_fds;
  with_fds.u64(0).ptr(fds.data(), sizeof fds).fda(2, 0, 0);
  EXPECT_EQ(client
                .write_read(kClientMain,
                            Commands().transaction_sg(0, 5, TF_ONE_WAY, with_fds, sizeof fds))
                .names(),
            "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -EPERM);
}

struct Malformed {
  const char* what;
  std::int32_t errno_value;
};

// S4.11 / S11.2 / S11.3: each malformed payload gets BR_FAILED_REPLY with the kernel's errno,
// and no ref is touched.
TEST_F(ObjectTest, OffsetsValidationOrder_S4_11) {
  flat_binder_object binder{};
  binder.hdr.type = BINDER_TYPE_BINDER;
  binder.binder = kServicePtr;
  binder.cookie = kServiceCookie;
  auto send = [&](Parcel parcel, std::uint32_t cmd_flags = TF_ONE_WAY) {
    return server.write_read(kServerLooper, Commands().transaction(0, 1, cmd_flags, parcel));
  };
  auto expect_failure = [&](Call call, std::int32_t errno_value, const char* what) {
    EXPECT_EQ(call.names(), "BR_NOOP BR_FAILED_REPLY") << what;
    EXPECT_EQ(extended_error(server, kServerLooper).param, errno_value) << what;
  };
  // Step 1: an unreadable offsets array.
  {
    binder_transaction_data tr{};
    tr.flags = TF_ONE_WAY;
    tr.data_size = 0;
    tr.offsets_size = 8;
    tr.data.ptr.offsets = 0x10;
    expect_failure(server.write_read(kServerLooper, Commands().transaction_raw(BC_TRANSACTION, tr)),
                   -EFAULT, "offsets unreadable");
  }
  // Step 2: offsets_size not a multiple of 8.
  {
    Parcel parcel = Parcel().object(binder);
    binder_transaction_data tr{};
    tr.flags = TF_ONE_WAY;
    tr.data_size = parcel.data.size();
    tr.offsets_size = 4;
    tr.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(parcel.data.data());
    tr.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(parcel.offsets.data());
    expect_failure(server.write_read(kServerLooper, Commands().transaction_raw(BC_TRANSACTION, tr)),
                   -EINVAL, "offsets_size % 8");
  }
  // Step 3: buffers_size not a multiple of 8.
  expect_failure(
      server.write_read(kServerLooper, Commands().transaction_sg(0, 1, TF_ONE_WAY, Parcel(), 12)),
      -EINVAL, "buffers_size % 8");
  // Step 4: an offset beyond data_size, and descending offsets.
  expect_failure(send(Parcel().u64(0).offset(64)), -EFAULT, "offset > data_size");
  expect_failure(send(Parcel().u64(0).object(binder).object(binder).offset(8)), -EFAULT,
                 "descending offsets");
  // Step 5: misaligned, unknown type, straddling data_size.
  expect_failure(send(Parcel().u32(0).u32(0).offset(2)), -EINVAL, "misaligned offset");
  expect_failure(send(Parcel().u64(0x1234).u64(0).offset(0)), -EINVAL, "unknown type");
  {
    Parcel parcel = Parcel().object(binder);
    parcel.data.resize(16);  // the object's last 8 bytes are outside the data
    expect_failure(send(parcel), -EINVAL, "object straddles data_size");
  }
  // Step 7: the data pointer unreadable.
  {
    binder_transaction_data tr{};
    tr.flags = TF_ONE_WAY;
    tr.data_size = 16;
    tr.data.ptr.buffer = 0x10;
    expect_failure(server.write_read(kServerLooper, Commands().transaction_raw(BC_TRANSACTION, tr)),
                   -EFAULT, "data unreadable");
  }
  EXPECT_EQ(sm.proc().counts().refs, 0u);
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
}

}  // namespace
}  // namespace cused::core::test
