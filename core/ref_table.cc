// SPDX-License-Identifier: GPL-2.0-only
#include "core/ref_table.h"

#include "core/node.h"

namespace cused::core {

Ref* RefTable::find(std::uint32_t desc) const {
  auto it = by_desc_.find(desc);
  return it == by_desc_.end() ? nullptr : it->second.get();
}

Ref* RefTable::find(const Node& node) const {
  auto it = by_node_.find(&node);
  return it == by_node_.end() ? nullptr : it->second;
}

std::uint32_t RefTable::new_desc(bool to_context_manager) const {
  std::uint32_t desc = to_context_manager ? 0 : 1;
  for (const auto& [used, ref] : by_desc_) {
    if (used > desc) break;
    if (used == desc) desc++;
  }
  return desc;
}

Ref& RefTable::add(std::unique_ptr<Ref> ref) {
  Ref& added = *ref;
  by_desc_.emplace(added.desc, std::move(ref));
  by_node_.emplace(added.node.get(), &added);
  return added;
}

void RefTable::forget_node(const Ref& ref) { by_node_.erase(ref.node.get()); }

std::unique_ptr<Ref> RefTable::take(const Ref& ref) {
  auto it = by_desc_.find(ref.desc);
  auto owned = std::move(it->second);
  by_desc_.erase(it);
  return owned;
}

}  // namespace cused::core
