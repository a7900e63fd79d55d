// SPDX-License-Identifier: GPL-2.0-only
// A local binder object (binder_node): owned by one proc, named by (ptr, cookie), referenced by
// other procs' refs. Its counters decide when the owner is told to take or drop its own references
// (S6.1, S6.5). The node lock guards every mutable field; while the owner lives, changes that
// queue node work also hold the owner's inner lock (the kernel's "nilocked" functions).
#pragma once

#include <atomic>
#include <boost/intrusive/list.hpp>
#include <cstdint>
#include <memory>

#include "core/locks.h"
#include "core/ref.h"
#include "core/stats.h"
#include "core/thread_priority.h"
#include "core/work.h"
#include "uapi/binder.h"

namespace cused::core {

class Node;
class Proc;

class NodeWork final : public Work {
 public:
  explicit NodeWork(Node& node) : Work(WorkType::kNode), node(node) {}
  Node& node;

 protected:
  std::shared_ptr<void> owner() override;
};

// What a change of a node's counts asks of its owner. The node decides (binder_inc_node_nilocked,
// binder_dec_node_nilocked; process.rs's update_refcount hands its decision back the same way) and
// the owner carries it out on its own lists, under its inner lock, which the caller holds with the
// node's lock (NodeInnerGuard, core/proc.h).
enum class NodeOwnerAction {
  kNone,
  // The sending thread delivers BR_INCREFS (S5.1), ahead of its own completion (S3.5).
  kQueueOnSender,
  // The sending thread delivers BR_ACQUIRE: the node's work leaves whatever list holds it.
  kMoveToSender,
  // The owner's todo gets the node's work: userspace must drop a reference (S6.5).
  kQueueOnOwner,
  // Nothing references the node any more: the owner drops it from its tree.
  kErase,
};

struct NodeIncrement {
  int error = 0;  // -EINVAL: a reference that may not be taken now
  NodeOwnerAction action = NodeOwnerAction::kNone;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  // `fp` carries the creating object's binder/cookie/flags; null for the plain SET_CONTEXT_MGR.
  Node(int debug_id, std::shared_ptr<Proc> owner, const flat_binder_object* fp,
       sync::LockPolicy lock_policy);
  ~Node();

  const int debug_id;
  const binder_uintptr_t ptr;
  const binder_uintptr_t cookie;
  const int min_priority;  // S4.12: the minimum nice, as mainline reads the priority bits
  // priority=android: the minimum (policy, kernel prio) and FLAT_BINDER_FLAG_INHERIT_RT, as the
  // Android common kernel's binder_init_node_ilocked reads the same flags.
  const SchedPriority min_sched_priority;
  const bool inherit_rt;
  const bool accept_fds;
  const bool txn_security_ctx;

  mutable NodeLock lock;
  // Null once the owner is released: the node is dead (S6.8).
  std::shared_ptr<Proc> proc CUSED_GUARDED_BY(lock);
  RefList refs CUSED_GUARDED_BY(lock);
  int internal_strong_refs CUSED_GUARDED_BY(lock) = 0;
  int local_strong_refs CUSED_GUARDED_BY(lock) = 0;
  int local_weak_refs CUSED_GUARDED_BY(lock) = 0;
  // Driver temporaries (binder_get_node ... binder_put_node). Taken by lookups under the owner's
  // inner lock or under the node lock; whoever decides to free the node holds both.
  std::atomic<int> tmp_refs{0};
  bool has_strong_ref CUSED_GUARDED_BY(lock) = false;
  bool pending_strong_ref CUSED_GUARDED_BY(lock) = false;
  bool has_weak_ref CUSED_GUARDED_BY(lock) = false;
  bool pending_weak_ref CUSED_GUARDED_BY(lock) = false;
  bool has_async_transaction CUSED_GUARDED_BY(lock) = false;
  // S4.5: oneways waiting for the one in flight to be freed. Also under the owner's inner lock.
  WorkList async_todo CUSED_GUARDED_BY(lock);
  NodeWork work{*this};
  // This node is its context's manager (read without the context lock, as the kernel does, to
  // pick desc 0 and allow the manager's first strong ref, S6.2).
  std::atomic<bool> is_context_manager{false};
  ObjCounter counter;  // S10.6 `stats`: node

  // S6.5: what userspace should hold, from the counters.
  bool wants_strong() const CUSED_REQUIRES(lock) {
    return internal_strong_refs || local_strong_refs;
  }
  bool wants_weak() const CUSED_REQUIRES(lock) {
    return wants_strong() || !refs.empty() || local_weak_refs || tmp_refs;
  }
  bool unreferenced() const CUSED_REQUIRES(lock) {
    return refs.empty() && !local_strong_refs && !local_weak_refs && !tmp_refs;
  }

  // S6.5: one more strong or weak reference; `internal` ones are other procs' refs, the rest the
  // driver's own (transactions, pending BR_ACQUIRE). `sender_known`: a sending thread is there to
  // deliver a first BR_INCREFS/BR_ACQUIRE (a node first sent in a transaction, S5.1).
  NodeIncrement increment(bool strong, bool internal, bool sender_known) CUSED_REQUIRES(lock);
  // One reference fewer: when the last of a kind goes, userspace is told to drop its own, and when
  // nothing references the node any more its owner erases it.
  NodeOwnerAction decrement(bool strong, bool internal) CUSED_REQUIRES(lock);
  // binder_put_node: a driver temporary reference ends.
  NodeOwnerAction put_tmp_ref() CUSED_REQUIRES(lock);
};

}  // namespace cused::core
