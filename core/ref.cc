// SPDX-License-Identifier: GPL-2.0-only
#include "core/ref.h"

#include <cassert>

namespace cused::core {

Ref::Ref(int debug_id, Proc& proc, OuterLock& outer_lock, std::shared_ptr<Node> node,
         NodeLock& node_lock, std::uint32_t desc)
    : debug_id(debug_id),
      proc(proc),
      outer_lock(outer_lock),
      node(std::move(node)),
      node_lock(node_lock),
      desc(desc) {}

Ref::~Ref() { assert(!node_entry.is_linked()); }

}  // namespace cused::core
