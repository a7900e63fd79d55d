// SPDX-License-Identifier: GPL-2.0-only
// Freeze notifications (S7.6-S7.9): registration, the state changes a freeze or thaw sends to
// every registration on the proc's nodes, the acknowledgement, and clearing, which races with a
// notification in flight exactly as a death clear does: FROZEN_BINDER -> (DONE) -> CLEAR_DONE.
#include "core/freeze_notification.h"

#include <cerrno>
#include <vector>

#include "core/proc.h"

namespace cused::core {

// S7.6: a live node's owner reports its current state at once; a dead node's registration stays
// silent until it is cleared (S11.13 "allow freeze notification for dead nodes").
int Proc::request_freeze_notification(const binder_handle_cookie& hc) {
  const binder_uintptr_t cookie = hc.cookie;  // binder_handle_cookie is packed
  auto freeze = std::make_shared<FreezeNotification>(cookie, inner_lock_);
  sync::LockGuard outer(outer_lock_);
  Ref* ref = get_ref(hc.handle, false);
  if (!ref) return -EINVAL;
  sync::LockGuard node_guard(ref->node_lock);
  if (ref->freeze) return -EINVAL;  // "already set"
  ref->freeze = freeze;
  count_object(freeze->counter, ObjStat::kFreeze);
  assume_same_lock(ref->node_lock, ref->node->lock);
  Proc* owner = ref->node->proc.get();
  if (!owner) return 0;
  bool frozen;
  {
    sync::LockGuard owner_guard(owner->inner_lock_);
    frozen = owner->freeze_.frozen;
  }
  sync::LockGuard inner(inner_lock_);
  assume_same_lock(inner_lock_, freeze->inner_lock);
  freeze->is_frozen = frozen;
  todo_.push_back(*freeze);
  wakeup_proc();
  return 0;
}

// S7.9: idle -> CLEAR_DONE now; queued unsent -> the queued item turns into the CLEAR_DONE;
// delivered -> CLEAR_DONE after the user's BC_FREEZE_NOTIFICATION_DONE.
int Proc::clear_freeze_notification(const binder_handle_cookie& hc) {
  sync::LockGuard outer(outer_lock_);
  Ref* ref = get_ref(hc.handle, false);
  if (!ref) return -EINVAL;
  sync::LockGuard node_guard(ref->node_lock);
  if (!ref->freeze) return -EINVAL;  // "not active"
  sync::LockGuard inner(inner_lock_);
  FreezeNotification& freeze = *ref->freeze;
  assume_same_lock(inner_lock_, freeze.inner_lock);
  if (freeze.cookie != hc.cookie) return -EINVAL;  // "cookie mismatch"
  std::shared_ptr<FreezeNotification> cleared = std::move(ref->freeze);
  freeze.type = WorkType::kClearFreezeNotification;
  if (!freeze.queued()) {
    todo_.push_back(freeze);
    wakeup_proc();
  } else if (freeze.sent) {
    freeze.resend = true;
  }
  return 0;
}

// S7.8
int Proc::freeze_notification_done(binder_uintptr_t cookie) {
  sync::LockGuard inner(inner_lock_);
  auto* found = delivered_freeze_.find_first<FreezeNotification>(
      [&](const FreezeNotification& freeze) { return freeze.cookie == cookie; });
  if (!found) return -EINVAL;  // "not found"
  assume_same_lock(inner_lock_, found->inner_lock);
  DequeuedWork acknowledged = WorkList::unlink(*found);
  found->sent = false;
  if (found->resend) {
    found->resend = false;
    todo_.push_back(*found);
    wakeup_proc();
  }
  return 0;
}

// S7.7 (binder_add_freeze_work): every registration on this proc's nodes learns the new state.
// An idle one gets a message; a queued one just reports the new state when read; one in flight
// is sent again after its DONE if the state it reported is no longer true.
void Proc::add_freeze_work(bool is_frozen) {
  std::vector<std::shared_ptr<Node>> nodes;
  {
    sync::LockGuard guard(inner_lock_);
    if (is_dead_) return;
    nodes.reserve(nodes_.size());
    for (auto& [ptr, node] : nodes_) nodes.push_back(node);
  }
  for (auto& node : nodes) {
    sync::LockGuard node_guard(node->lock);
    if (node->proc.get() != this) continue;  // released meanwhile
    for (Ref& ref : node->refs) {
      assume_same_lock(node->lock, ref.node_lock);
      Proc& holder = ref.proc;
      sync::LockGuard holder_guard(holder.inner_lock_);
      if (!ref.freeze) continue;
      FreezeNotification& freeze = *ref.freeze;
      assume_same_lock(holder.inner_lock_, freeze.inner_lock);
      freeze.type = WorkType::kFrozenBinder;
      if (!freeze.queued()) {
        freeze.is_frozen = is_frozen;
        holder.todo_.push_back(freeze);
        holder.wakeup_proc();
      } else {
        if (freeze.sent && freeze.is_frozen != is_frozen) freeze.resend = true;
        freeze.is_frozen = is_frozen;
      }
    }
  }
}

}  // namespace cused::core
