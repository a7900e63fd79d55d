// SPDX-License-Identifier: GPL-2.0-only
// core/ref_table.cc: a proc's handle table on its own (the kernel's refs_by_desc / refs_by_node,
// process.rs's by_handle / by_node), without the engine around it. The engine's tests reach it
// through BC_INCREFS and published objects (refcount_test.cc); here its rules are checked
// directly: which desc a new ref gets (S6.2, S6.3), lookup by desc and by node (one ref per node
// per proc, S6.2) and the two steps of removal.
//
// The table has no lock of its own; in a Proc it is guarded by the proc's outer lock. This test
// owns its table and touches no guarded member of a Ref or a Node (only their constant fields), so
// it takes no lock. The refs' holder is a real proc of a test device, which the table never uses.
#include "core/ref_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/node.h"
#include "core/ref.h"
#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

class RefTableTest : public ::testing::Test {
 private:
  // Declared before the table, so they outlive the refs it owns.
  Env env_;
  Client holder_{env_, 100};
  OuterLock outer_lock_;
  std::vector<std::shared_ptr<Node>> nodes_;
  int next_id_ = 1;

 protected:
  // A node of some other proc (the owner does not matter to the table).
  std::shared_ptr<Node> node() {
    nodes_.push_back(std::make_shared<Node>(next_id_++, nullptr, nullptr, sync::LockPolicy{}));
    return nodes_.back();
  }
  // A ref of `holder_` to `to` under `desc`, filed in the table.
  Ref& add(const std::shared_ptr<Node>& to, std::uint32_t desc) {
    return table.add(
        std::make_unique<Ref>(next_id_++, holder_.proc(), outer_lock_, to, to->lock, desc));
  }
  // The desc the table gives a new ref (RefTable::new_desc, what Proc::ref_for_node files it
  // under).
  std::uint32_t next_desc(bool to_context_manager) const {
    return table.new_desc(to_context_manager);
  }

  RefTable table;
};

// S6.2: an empty table: nothing is found, and a new ref gets desc 1, the manager's desc 0.
TEST_F(RefTableTest, EmptyTableFindsNothing_S6_2) {
  auto n = node();
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(0), nullptr);
  EXPECT_EQ(table.find(1), nullptr);
  EXPECT_EQ(table.find(*n), nullptr);
  EXPECT_EQ(next_desc(false), 1u);
  EXPECT_EQ(next_desc(true), 0u);
}

// S6.2: new refs take the lowest unused desc >= 1: in order while there is no gap, then the first
// gap a removal left, whichever desc was removed.
TEST_F(RefTableTest, LowestUnusedDescFillsTheFirstGap_S6_2) {
  std::vector<Ref*> refs;
  for (std::uint32_t i = 0; i < 5; i++) {
    std::uint32_t desc = next_desc(false);
    EXPECT_EQ(desc, i + 1);
    refs.push_back(&add(node(), desc));
  }
  EXPECT_EQ(next_desc(false), 6u);
  auto fourth = table.take(*refs[3]);  // desc 4
  auto second = table.take(*refs[1]);  // desc 2
  EXPECT_EQ(next_desc(false), 2u) << "the lowest gap, not the last one freed";
  add(node(), 2);
  EXPECT_EQ(next_desc(false), 4u);
  add(node(), 4);
  EXPECT_EQ(next_desc(false), 6u);
  EXPECT_EQ(table.size(), 5u);
}

// S6.2 / S6.3: desc 0 is the context manager's only: a ref to any other node never gets it, even
// when it is free; a ref to the manager gets it when it is free, and the lowest free desc when an
// earlier manager's ref still holds 0 (S11.5: the kernel's fix of that lookup).
TEST_F(RefTableTest, DescZeroOnlyForTheContextManager_S6_2_S6_3_S11_5) {
  add(node(), 1);
  EXPECT_EQ(next_desc(false), 2u);
  EXPECT_EQ(next_desc(true), 0u);
  add(node(), 0);  // the ref to the first manager
  EXPECT_EQ(next_desc(true), 2u) << "a later manager's node, while desc 0 is still held";
  EXPECT_EQ(next_desc(false), 2u);
  add(node(), 3);
  EXPECT_EQ(next_desc(true), 2u);
}

// S6.2: each ref is found by its desc and by its node, and no other desc or node finds it.
TEST_F(RefTableTest, FoundByDescAndByNode_S6_2) {
  auto a = node(), b = node(), unknown = node();
  Ref& to_a = add(a, 1);
  Ref& to_b = add(b, 2);
  EXPECT_EQ(table.find(1), &to_a);
  EXPECT_EQ(table.find(2), &to_b);
  EXPECT_EQ(table.find(*a), &to_a);
  EXPECT_EQ(table.find(*b), &to_b);
  EXPECT_EQ(table.find(3), nullptr);
  EXPECT_EQ(table.find(0), nullptr);
  EXPECT_EQ(table.find(*unknown), nullptr);
  EXPECT_EQ(to_b.node, b);
  EXPECT_EQ(to_b.desc, 2u);
  EXPECT_EQ(table.indexed_by_node(), 2u);
}

// S6.2 / S6.4: a ref going away first stops being found by its node (binder_cleanup_ref_olocked),
// while its desc stays taken: a new ref to the same node gets another desc meanwhile, and the old
// handle keeps naming the old ref. take() then frees the desc for reuse.
TEST_F(RefTableTest, RemovalForgetsTheNodeFirstAndTheDescOnTake_S6_2_S6_4) {
  auto n = node(), other = node();
  Ref& old_ref = add(n, 1);
  add(other, 2);
  table.forget_node(old_ref);
  EXPECT_EQ(table.find(*n), nullptr);
  EXPECT_EQ(table.find(1), &old_ref);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.indexed_by_node(), 1u);
  EXPECT_EQ(next_desc(false), 3u) << "desc 1 is not free before take()";

  std::unique_ptr<Ref> owned = table.take(old_ref);
  EXPECT_EQ(owned.get(), &old_ref) << "the caller frees it";
  EXPECT_EQ(table.find(1), nullptr);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(next_desc(false), 1u);

  Ref& again = add(n, next_desc(false));
  EXPECT_EQ(again.desc, 1u);
  EXPECT_EQ(table.find(*n), &again);
  EXPECT_EQ(table.indexed_by_node(), table.size());
}

// S10.6: the refs are listed in desc order (the logs and the invariant checker walk them so),
// whatever order they were added in.
TEST_F(RefTableTest, ListedInDescOrder_S10_6) {
  for (std::uint32_t desc : {5u, 1u, 3u, 0u, 2u}) add(node(), desc);
  std::vector<std::uint32_t> listed;
  for (const auto& [desc, ref] : table.by_desc()) {
    EXPECT_EQ(ref->desc, desc);
    listed.push_back(desc);
  }
  EXPECT_EQ(listed, (std::vector<std::uint32_t>{0, 1, 2, 3, 5}));
  EXPECT_EQ(next_desc(false), 4u);
}

}  // namespace
}  // namespace cused::core::test
