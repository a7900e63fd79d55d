// SPDX-License-Identifier: GPL-2.0-only
// A proc's reference to a node (binder_ref), named by a handle ("desc") in that proc, and a death
// notification registered on it (binder_ref_death, S7); freeze notifications are in
// freeze_notification.h.
#pragma once

#include <boost/intrusive/list.hpp>
#include <cstdint>
#include <memory>

#include "core/locks.h"
#include "core/stats.h"
#include "core/work.h"
#include "uapi/binder.h"

namespace cused::core {

class FreezeNotification;
class Node;
class Proc;

// BC_REQUEST_DEATH_NOTIFICATION's registration; its work item becomes BR_DEAD_BINDER or
// BR_CLEAR_DEATH_NOTIFICATION_DONE (the type changes with the clear-vs-death race, S7.4).
class Death final : public Work, public std::enable_shared_from_this<Death> {
 public:
  explicit Death(binder_uintptr_t cookie) : Work(WorkType::kDeadBinder), cookie(cookie) {}
  const binder_uintptr_t cookie;
  ObjCounter counter;  // S10.6 `stats`: death

 protected:
  std::shared_ptr<void> owner() override { return shared_from_this(); }
};

using RefHook =
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>>;

// What binder_ref_data names of a ref in the tracepoints: its debug id and its handle.
struct RefData {
  int debug_id = 0;
  std::uint32_t desc = 0;
};

class Ref {
 public:
  Ref(int debug_id, Proc& proc, OuterLock& outer_lock, std::shared_ptr<Node> node,
      NodeLock& node_lock, std::uint32_t desc);
  ~Ref();
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;

  const int debug_id;
  Proc& proc;             // the holder; outlives the ref (refs are dropped at proc release)
  OuterLock& outer_lock;  // proc.outer_lock_
  const std::shared_ptr<Node> node;
  NodeLock& node_lock;  // node->lock
  const std::uint32_t desc;

  std::uint32_t strong CUSED_GUARDED_BY(outer_lock) = 0;
  std::uint32_t weak CUSED_GUARDED_BY(outer_lock) = 0;
  // Read when the node dies (node lock held), set and cleared with both locks held.
  std::shared_ptr<Death> death CUSED_GUARDED_BY(node_lock);
  // BC_REQUEST_FREEZE_NOTIFICATION's registration (S7.6), same locking as `death`.
  std::shared_ptr<FreezeNotification> freeze CUSED_GUARDED_BY(node_lock);
  // Entry in node->refs.
  RefHook node_entry;
  ObjCounter counter;  // S10.6 `stats`: ref
};

using RefList =
    boost::intrusive::list<Ref, boost::intrusive::member_hook<Ref, RefHook, &Ref::node_entry>,
                           boost::intrusive::constant_time_size<true>>;

}  // namespace cused::core
