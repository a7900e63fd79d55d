// SPDX-License-Identifier: GPL-2.0-only
#include "core/node.h"

#include <cerrno>

namespace cused::core {
namespace {

// The priority bits are an s8 there: 0x80..0xff are nice -128..-1, out of range, never applied.
SchedPriority node_min_sched_priority(const flat_binder_object* fp) {
  const std::uint32_t flags = fp ? fp->flags : 0;
  const int policy = static_cast<int>((flags & uapi::FLAT_BINDER_FLAG_SCHED_POLICY_MASK) >>
                                      uapi::FLAT_BINDER_FLAG_SCHED_POLICY_SHIFT);
  const auto priority = static_cast<std::int8_t>(flags & FLAT_BINDER_FLAG_PRIORITY_MASK);
  return {policy, to_kernel_prio(policy, priority)};
}

}  // namespace

std::shared_ptr<void> NodeWork::owner() { return node.shared_from_this(); }

Node::Node(int debug_id, std::shared_ptr<Proc> owner, const flat_binder_object* fp,
           sync::LockPolicy lock_policy)
    : debug_id(debug_id),
      ptr(fp ? fp->binder : 0),
      cookie(fp ? fp->cookie : 0),
      min_priority(fp ? static_cast<int>(fp->flags & FLAT_BINDER_FLAG_PRIORITY_MASK) : 0),
      min_sched_priority(node_min_sched_priority(fp)),
      inherit_rt(fp && (fp->flags & uapi::FLAT_BINDER_FLAG_INHERIT_RT)),
      accept_fds(fp && (fp->flags & FLAT_BINDER_FLAG_ACCEPTS_FDS)),
      txn_security_ctx(fp && (fp->flags & FLAT_BINDER_FLAG_TXN_SECURITY_CTX)),
      lock(lock_policy),
      proc(std::move(owner)) {}

Node::~Node() = default;

NodeIncrement Node::increment(bool strong, bool internal, bool sender_known) {
  const bool owned = proc != nullptr;
  if (strong) {
    if (internal) {
      // A proc's first strong ref needs a sender to deliver BR_ACQUIRE, unless userspace already
      // holds a strong reference on its context manager (S6.2).
      if (!sender_known && internal_strong_refs == 0 &&
          !(owned && is_context_manager && has_strong_ref))
        return {-EINVAL};
      internal_strong_refs++;
    } else {
      local_strong_refs++;
    }
    if (!has_strong_ref && sender_known && owned) return {0, NodeOwnerAction::kMoveToSender};
    return {};
  }
  if (!internal) local_weak_refs++;
  if (has_weak_ref || work.queued()) return {};
  if (!sender_known || !owned) return {-EINVAL};
  return {0, NodeOwnerAction::kQueueOnSender};
}

NodeOwnerAction Node::decrement(bool strong, bool internal) {
  if (strong) {
    if (internal)
      internal_strong_refs--;
    else
      local_strong_refs--;
    if (local_strong_refs || internal_strong_refs) return NodeOwnerAction::kNone;
  } else {
    if (!internal) local_weak_refs--;
    if (local_weak_refs || tmp_refs || !refs.empty()) return NodeOwnerAction::kNone;
  }
  const bool owned = proc != nullptr;
  if (owned && (has_strong_ref || has_weak_ref))
    return work.queued() ? NodeOwnerAction::kNone : NodeOwnerAction::kQueueOnOwner;
  // A dead node just goes with its last reference, which its holder drops.
  if (!owned || !unreferenced()) return NodeOwnerAction::kNone;
  return NodeOwnerAction::kErase;
}

NodeOwnerAction Node::put_tmp_ref() {
  tmp_refs--;
  return decrement(false, true);
}

}  // namespace cused::core
