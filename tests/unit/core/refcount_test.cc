// SPDX-License-Identifier: GPL-2.0-only
// core/refcount.cc: reference counting (S6): handles, the BC_ ref commands and the node counters
// they move, and the BR_ requests to the owner with their _DONE handshakes.
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using RefCountTest = World;
using Counts = std::pair<std::uint32_t, std::uint32_t>;

// S6.2: new refs take the lowest free desc >= 1; freed descs are reused.
TEST_F(RefCountTest, LowestFreeDescIsReused_S6_2) {
  std::uint32_t a = publish(0x1, 0x1);
  std::uint32_t b = publish(0x2, 0x2);
  std::uint32_t c = publish(0x3, 0x3);
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(c, 3u);
  write_ok(sm, kSmLooper, Commands().ref(BC_RELEASE, b).ref(BC_DECREFS, b));
  EXPECT_FALSE(sm.proc().ref_counts(b));
  EXPECT_EQ(publish(0x4, 0x4), 2u);
}

// S6.3 / S11.4: the manager taking a ref on its own node through handle 0 fails the ioctl.
TEST_F(RefCountTest, ManagerAcquiringHandleZeroIsEinval_S6_3) {
  Call call = sm.write(kSmLooper, Commands().ref(BC_ACQUIRE, 0));
  EXPECT_EQ(call.result(), -EINVAL);
  EXPECT_EQ(call.bwr().write_consumed, 0u);
  EXPECT_EQ(sm.write(kSmLooper, Commands().ref(BC_INCREFS, 0)).result(), -EINVAL);
}

// S6.3 / S6.2: anyone else's BC_INCREFS/BC_ACQUIRE on 0 makes a ref to the manager, desc 0.
TEST_F(RefCountTest, HandleZeroRefersToManager_S6_3) {
  write_ok(client, kClientMain, Commands().ref(BC_INCREFS, 0).ref(BC_ACQUIRE, 0));
  EXPECT_EQ(client.proc().ref_counts(0), (Counts{1, 1}));
  // S2.9: the manager can ask about the node behind its own strong handles only; here it has
  // none, so a ref to the client's node is needed: the client publishes one.
  write_ok(client, kClientMain, Commands().ref(BC_RELEASE, 0).ref(BC_DECREFS, 0));
  EXPECT_FALSE(client.proc().ref_counts(0));
}

// S6.4: BC_ACQUIRE cannot promote a weak-only handle; decrements below zero and unknown
// handles are soft errors; a ref goes when both counts reach 0.
TEST_F(RefCountTest, RefCountCommandSoftErrors_S6_4) {
  server.write_read(
      kServerLooper,
      Commands().transaction(0, 1, TF_ONE_WAY, Parcel().weak_binder(kServicePtr, kServiceCookie)));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  std::uint32_t handle = object_at<flat_binder_object>(tr, 0).handle;
  write_ok(sm, kSmLooper,
           Commands()
               .ref(BC_INCREFS, handle)
               .ref(BC_ACQUIRE, handle)  // weak ref used as strong: ignored
               .ref(BC_RELEASE, handle)  // no strong count: ignored
               .ref(BC_DECREFS, 77)      // unknown handle: ignored
               .free_buffer(tr.data.ptr.buffer));
  EXPECT_EQ(sm.proc().ref_counts(handle), (Counts{0, 1}));
  write_ok(sm, kSmLooper, Commands().ref(BC_DECREFS, handle));
  EXPECT_FALSE(sm.proc().ref_counts(handle));
}

// S6.5 / S6.6: BR_INCREFS/BR_ACQUIRE pin the node with the driver's own references until the
// matching _DONE; a _DONE without a pending request is ignored.
TEST_F(RefCountTest, DoneHandshakesDropTheDriversReference_S6_6) {
  server.write_read(
      kServerLooper,
      Commands().transaction(0, 1, TF_ONE_WAY, Parcel().binder(kServicePtr, kServiceCookie)));
  auto counts = server.proc().node_counts(kServicePtr);
  ASSERT_TRUE(counts);
  EXPECT_EQ(counts->local_strong_refs, 1);
  EXPECT_EQ(counts->local_weak_refs, 1);
  write_ok(server, kServerLooper,
           Commands()
               .done(BC_ACQUIRE_DONE, kServicePtr, kServiceCookie + 1)  // cookie mismatch
               .done(BC_ACQUIRE_DONE, kServicePtr + 1, kServiceCookie)  // no such node
               .done(BC_ACQUIRE_DONE, kServicePtr, kServiceCookie)
               .done(BC_ACQUIRE_DONE, kServicePtr, kServiceCookie));  // no pending request
  counts = server.proc().node_counts(kServicePtr);
  EXPECT_EQ(counts->local_strong_refs, 0);
  EXPECT_EQ(counts->local_weak_refs, 1);
  write_ok(server, kServerLooper, Commands().done(BC_INCREFS_DONE, kServicePtr, kServiceCookie));
  EXPECT_EQ(server.proc().node_counts(kServicePtr)->local_weak_refs, 0);
}

// S6.5: losing the strong holders but keeping a weak one sends BR_RELEASE only; the weak one
// going sends BR_DECREFS.
TEST_F(RefCountTest, ReleaseThenDecrefsAsHoldersGo_S6_5) {
  std::uint32_t handle = publish();
  write_ok(sm, kSmLooper, Commands().ref(BC_RELEASE, handle));
  EXPECT_EQ(read_now(server, kServerLooper).names(), "BR_NOOP BR_RELEASE");
  EXPECT_TRUE(server.proc().node_counts(kServicePtr));
  write_ok(sm, kSmLooper, Commands().ref(BC_DECREFS, handle));
  EXPECT_EQ(read_now(server, kServerLooper).names(), "BR_NOOP BR_DECREFS");
  EXPECT_FALSE(server.proc().node_counts(kServicePtr));
}

// S2.9: the manager's view of a node behind one of its strong handles.
TEST_F(RefCountTest, NodeInfoForRefCountsLocalAndInternal_S2_9) {
  std::uint32_t handle = publish();
  binder_node_info_for_ref info{};
  info.handle = handle;
  ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_GET_NODE_INFO_FOR_REF, info), 0);
  EXPECT_EQ(info.strong_count, 1u);  // internal strong: the manager's ref
  EXPECT_EQ(info.weak_count, 0u);    // remote refs are not counted as weak
}

}  // namespace
}  // namespace cused::core::test
