// SPDX-License-Identifier: GPL-2.0-only
// A proc's handle table (binder_proc's refs_by_desc and refs_by_node; process.rs's ProcessNodeRefs
// by_handle / by_node): every ref the proc holds, owned under its desc and found again by its
// node. It has no lock of its own: its Proc holds it guarded by the proc's outer lock, as the
// kernel's two trees are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/ref.h"

namespace cused::core {

class Node;

class RefTable {
 public:
  using ByDesc = std::map<std::uint32_t, std::unique_ptr<Ref>>;

  Ref* find(std::uint32_t desc) const;
  Ref* find(const Node& node) const;
  // The desc a new ref gets: the lowest one no ref uses, from 0 for a ref to the context
  // manager's node and from 1 for any other (S6.2, S6.3).
  std::uint32_t new_desc(bool to_context_manager) const;
  // Files a new ref under its desc and its node; returns it.
  Ref& add(std::unique_ptr<Ref> ref);
  // The ref stops being found by its node (binder_cleanup_ref_olocked); its desc stays taken until
  // take().
  void forget_node(const Ref& ref);
  // The ref leaves the table; the caller frees it.
  std::unique_ptr<Ref> take(const Ref& ref);

  bool empty() const { return by_desc_.empty(); }
  std::size_t size() const { return by_desc_.size(); }
  // Every ref in desc order (the logs, the invariant checker).
  const ByDesc& by_desc() const { return by_desc_; }
  // How many refs can be found by node: size() unless a cleanup is half done (invariants).
  std::size_t indexed_by_node() const { return by_node_.size(); }

 private:
  ByDesc by_desc_;
  std::unordered_map<const Node*, Ref*> by_node_;
};

}  // namespace cused::core
