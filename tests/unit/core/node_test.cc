// SPDX-License-Identifier: GPL-2.0-only
// core/node.cc: a node's count rules on their own (binder_inc_node_nilocked /
// binder_dec_node_nilocked), without a proc carrying out what they ask. The engine's tests see
// their effects as BR_INCREFS/BR_ACQUIRE/BR_RELEASE/BR_DECREFS and freed nodes
// (refcount_test.cc); here each decision is checked where it is made: which references may be
// taken (S6.2, S6.5), who is told (S5.1, S6.5), and when the owner erases the node.
//
// The owner is a real proc of a test device; its lists are never touched, since nothing here
// carries the decisions out. Each test holds the node's lock, which the rules require.
#include "core/node.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

class NodeTest : public ::testing::Test {
 protected:
  std::shared_ptr<Node> owned() {
    return std::make_shared<Node>(1, owner_.handle(), nullptr, sync::LockPolicy{});
  }
  static std::shared_ptr<Node> dead() {
    return std::make_shared<Node>(2, nullptr, nullptr, sync::LockPolicy{});
  }

 private:
  Env env_;
  Client owner_{env_, 100};
};

constexpr bool kStrong = true, kWeak = false;
constexpr bool kInternal = true, kLocal = false;
constexpr bool kSender = true, kNoSender = false;

// S5.1: a node first sent in a transaction asks its owner for BR_ACQUIRE through the sending
// thread; the work moves there from wherever it sat.
TEST_F(NodeTest, FirstStrongRefWithASenderMovesTheWorkToIt_S5_1) {
  auto node = owned();
  sync::LockGuard guard(node->lock);
  NodeIncrement change = node->increment(kStrong, kInternal, kSender);
  EXPECT_EQ(change.error, 0);
  EXPECT_EQ(change.action, NodeOwnerAction::kMoveToSender);
  EXPECT_EQ(node->internal_strong_refs, 1);
}

// S6.2: a proc's first strong ref to a node needs a transaction to announce it; BC_ACQUIRE on a
// handle that holds no strong count is refused.
TEST_F(NodeTest, FirstInternalStrongRefWithoutASenderIsRefused_S6_2) {
  auto node = owned();
  sync::LockGuard guard(node->lock);
  NodeIncrement change = node->increment(kStrong, kInternal, kNoSender);
  EXPECT_EQ(change.error, -EINVAL);
  EXPECT_EQ(node->internal_strong_refs, 0);
}

// S6.2: the context manager's node is the exception while userspace holds it strongly: handle 0
// can be acquired without a transaction.
TEST_F(NodeTest, ContextManagerHeldStronglyTakesAStrongRefWithoutASender_S6_2) {
  auto node = owned();
  node->is_context_manager = true;
  sync::LockGuard guard(node->lock);
  node->has_strong_ref = true;
  NodeIncrement change = node->increment(kStrong, kInternal, kNoSender);
  EXPECT_EQ(change.error, 0);
  EXPECT_EQ(change.action, NodeOwnerAction::kNone);  // userspace already holds it
}

// S6.5: a weak ref asks for BR_INCREFS once; a node whose userspace already holds a weak
// reference, or whose work is queued, asks for nothing more.
TEST_F(NodeTest, WeakRefAsksForIncrefsOnlyWhileUserspaceHoldsNone_S6_5) {
  auto node = owned();
  sync::LockGuard guard(node->lock);
  EXPECT_EQ(node->increment(kWeak, kInternal, kSender).action, NodeOwnerAction::kQueueOnSender);
  node->has_weak_ref = true;
  EXPECT_EQ(node->increment(kWeak, kInternal, kSender).action, NodeOwnerAction::kNone);
}

// A weak reference to a dead node, or one no thread can announce, cannot be taken.
TEST_F(NodeTest, WeakRefToADeadNodeIsRefused_S6_8) {
  auto node = dead();
  sync::LockGuard guard(node->lock);
  EXPECT_EQ(node->increment(kWeak, kInternal, kSender).error, -EINVAL);
  auto alive = owned();
  sync::LockGuard alive_guard(alive->lock);
  EXPECT_EQ(alive->increment(kWeak, kInternal, kNoSender).error, -EINVAL);
}

// S6.5: when the last strong count goes and userspace holds the node, the owner's todo gets the
// work that becomes BR_RELEASE; while a strong count remains, nothing happens.
TEST_F(NodeTest, LastStrongCountGoneTellsTheOwnerToRelease_S6_5) {
  auto node = owned();
  sync::LockGuard guard(node->lock);
  node->local_strong_refs = 2;
  node->has_strong_ref = true;
  EXPECT_EQ(node->decrement(kStrong, kLocal), NodeOwnerAction::kNone);
  EXPECT_EQ(node->decrement(kStrong, kLocal), NodeOwnerAction::kQueueOnOwner);
  EXPECT_EQ(node->local_strong_refs, 0);
}

// S6.5: a node nothing references and whose userspace holds nothing is erased by its owner; a
// driver temporary reference keeps it until put back.
TEST_F(NodeTest, UnreferencedNodeIsErasedOnceItsTemporaryReferenceIsPut_S6_5) {
  auto node = owned();
  sync::LockGuard guard(node->lock);
  node->local_weak_refs = 1;
  node->tmp_refs = 1;
  EXPECT_EQ(node->decrement(kWeak, kLocal), NodeOwnerAction::kNone);  // the temporary holds it
  EXPECT_EQ(node->put_tmp_ref(), NodeOwnerAction::kErase);
  EXPECT_EQ(node->tmp_refs.load(), 0);
}

// S6.8: a dead node is never erased from a tree (it has none); its last holder just drops it.
TEST_F(NodeTest, DeadNodeAsksNothingOfAnOwner_S6_8) {
  auto node = dead();
  sync::LockGuard guard(node->lock);
  node->tmp_refs = 1;
  EXPECT_EQ(node->put_tmp_ref(), NodeOwnerAction::kNone);
}

}  // namespace
}  // namespace cused::core::test
