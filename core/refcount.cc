// SPDX-License-Identifier: GPL-2.0-only
// Nodes and refs: lookups, creation, the node counters and the handle table (S6; binder.c's
// binder_inc_node .. binder_inc_ref_for_node).
#include <cerrno>

#include "core/driver.h"
#include "core/freeze_notification.h"
#include "core/proc.h"

namespace cused::core {

NodeInnerGuard::NodeInnerGuard(Node& node) : node_(node) {
  node_.lock.lock();
  owner_ = node_.proc.get();
  if (owner_) owner_->inner_lock_.lock();
}

NodeInnerGuard::~NodeInnerGuard() {
  if (owner_) owner_->inner_lock_.unlock();
  node_.lock.unlock();
}

NodeTmpRef& NodeTmpRef::operator=(NodeTmpRef&& other) noexcept {
  if (this != &other) {
    reset();
    node_ = std::move(other.node_);
  }
  return *this;
}

void NodeTmpRef::reset() {
  if (auto node = std::move(node_)) Proc::put_node(*node);
}

// binder_inc_node_nilocked: the node counts, its owner queues what the node asks for.
// `target_thread` is the sending thread when a node is first sent (S5.1).
int Proc::inc_node_nilocked(Node& node, bool strong, bool internal, Thread* target_thread) {
  NodeIncrement change = node.increment(strong, internal, target_thread != nullptr);
  if (change.action != NodeOwnerAction::kNone)
    node.proc->carry_out(node, change.action, target_thread);
  return change.error;
}

// binder_dec_node_nilocked. Returns the node when this was its last reference: it is gone from
// its owner's tree and the caller drops it after unlocking.
std::shared_ptr<Node> Proc::dec_node_nilocked(Node& node, bool strong, bool internal) {
  NodeOwnerAction action = node.decrement(strong, internal);
  if (action == NodeOwnerAction::kNone) return nullptr;
  return node.proc->carry_out(node, action, nullptr);
}

// The owner's part of a count change: `node` is ours and the caller holds our inner lock with the
// node's (NodeInnerGuard). The sending thread is one of ours, so that lock is the thread's too.
std::shared_ptr<Node> Proc::carry_out(Node& node, NodeOwnerAction action, Thread* sender) {
  assume_inner_locked();
  switch (action) {
    case NodeOwnerAction::kNone:
      break;
    case NodeOwnerAction::kMoveToSender:
    case NodeOwnerAction::kQueueOnSender: {
      assume_locked(*sender);
      DequeuedWork moved;
      if (action == NodeOwnerAction::kMoveToSender) moved = WorkList::unlink(node.work);
      sender->enqueue_deferred_work(node.work);
      break;
    }
    case NodeOwnerAction::kQueueOnOwner:
      todo_.push_back(node.work);
      wakeup_proc();
      break;
    case NodeOwnerAction::kErase:
      return erase_node(node);
  }
  return nullptr;
}

// The node leaves the tree; the caller drops the returned reference after unlocking.
std::shared_ptr<Node> Proc::erase_node(Node& node) {
  assume_inner_locked();
  DequeuedWork dropped = WorkList::unlink(node.work);
  auto it = nodes_.find(node.ptr);
  if (it == nodes_.end() || it->second.get() != &node) return nullptr;
  auto freed = std::move(it->second);
  nodes_.erase(it);
  return freed;
}

int Proc::inc_node(Node& node, bool strong, bool internal, Thread* target_thread) {
  NodeInnerGuard guard(node);
  return inc_node_nilocked(node, strong, internal, target_thread);
}

void Proc::dec_node(Node& node, bool strong, bool internal) {
  std::shared_ptr<Node> freed;
  NodeInnerGuard guard(node);
  freed = dec_node_nilocked(node, strong, internal);
}

void Proc::put_node(Node& node) {
  std::shared_ptr<Node> freed;
  NodeInnerGuard guard(node);
  if (NodeOwnerAction action = node.put_tmp_ref(); action != NodeOwnerAction::kNone)
    freed = node.proc->carry_out(node, action, nullptr);
}

// binder_get_node: this proc's node for `ptr`, with a temporary reference.
NodeTmpRef Proc::get_node(binder_uintptr_t ptr) {
  sync::LockGuard guard(inner_lock_);
  auto it = nodes_.find(ptr);
  if (it == nodes_.end()) return {};
  it->second->tmp_refs++;
  return NodeTmpRef(it->second);
}

// binder_new_node: finds or creates this proc's node for fp->binder (S5.1: a new node takes its
// flags from the object that created it).
NodeTmpRef Proc::new_node(const flat_binder_object* fp) {
  binder_uintptr_t ptr = fp ? fp->binder : 0;
  auto node = std::make_shared<Node>(driver_.next_debug_id(), shared_from_this(), fp, lock_policy_);
  sync::LockGuard guard(inner_lock_);
  auto [it, inserted] = nodes_.emplace(ptr, node);
  if (inserted) count_object(node->counter, ObjStat::kNode);
  it->second->tmp_refs++;
  return NodeTmpRef(it->second);
}

// binder_get_ref_olocked
Ref* Proc::get_ref(std::uint32_t desc, bool need_strong) {
  Ref* found = refs_.find(desc);
  if (!found) return nullptr;
  Ref& ref = *found;
  assume_same_lock(outer_lock_, ref.outer_lock);
  if (need_strong && !ref.strong) return nullptr;  // "tried to use weak ref as strong ref"
  return &ref;
}

// binder_get_ref_for_node_olocked with a new ref: the lowest free desc, from 0 for the current
// context manager and from 1 for everything else (S6.2).
Ref& Proc::ref_for_node(Node& node) {
  if (Ref* ref = refs_.find(node)) return *ref;
  const std::uint32_t desc = refs_.new_desc(node.is_context_manager);
  Ref& added = refs_.add(std::make_unique<Ref>(driver_.next_debug_id(), *this, outer_lock_,
                                               node.shared_from_this(), node.lock, desc));
  count_object(added.counter, ObjStat::kRef);
  sync::LockGuard guard(node.lock);
  node.refs.push_front(added);
  return added;
}

// binder_inc_ref_olocked
int Proc::inc_ref(Ref& ref, bool strong, Thread* target_thread) {
  assume_same_lock(outer_lock_, ref.outer_lock);
  std::uint32_t& count = strong ? ref.strong : ref.weak;
  if (count == 0) {
    if (int ret = inc_node(*ref.node, strong, true, target_thread)) return ret;
  }
  count++;
  return 0;
}

// binder_dec_ref_olocked: true when both counts reached 0 and the ref was cleaned up (S6.4).
bool Proc::dec_ref(Ref& ref, bool strong) {
  assume_same_lock(outer_lock_, ref.outer_lock);
  std::uint32_t& count = strong ? ref.strong : ref.weak;
  if (count == 0) return false;  // "invalid dec": a soft error
  count--;
  if (strong && count == 0) dec_node(*ref.node, true, true);
  if (ref.strong == 0 && ref.weak == 0) {
    cleanup_ref(ref);
    return true;
  }
  return false;
}

// binder_cleanup_ref_olocked: the ref leaves the handle table and its node; a registered death
// notification is discarded without a message (S6.4, S7.5). The caller frees it (refs_.take).
void Proc::cleanup_ref(Ref& ref) {
  assume_same_lock(outer_lock_, ref.outer_lock);
  refs_.forget_node(ref);
  std::shared_ptr<Death> death;
  std::shared_ptr<FreezeNotification> freeze;
  {
    Node& node = *ref.node;
    std::shared_ptr<Node> freed;
    NodeInnerGuard guard(node);
    assume_same_lock(node.lock, ref.node_lock);
    if (ref.strong) freed = dec_node_nilocked(node, true, true);
    node.refs.erase(RefList::s_iterator_to(ref));
    freed = dec_node_nilocked(node, false, true);
    death = std::move(ref.death);
    freeze = std::move(ref.freeze);
  }
  if (death) dequeue_work(*death);
  if (freeze) dequeue_work(*freeze);  // S7.5 for freeze registrations: dropped silently
}

// binder_update_ref_for_handle: BC_INCREFS..BC_DECREFS on an existing handle. Strong changes
// need a ref that already holds a strong count (S6.4).
int Proc::update_ref_for_handle(std::uint32_t desc, bool increment, bool strong,
                                std::uint32_t* out_desc) {
  std::unique_ptr<Ref> deleted;
  sync::LockGuard guard(outer_lock_);
  Ref* ref = get_ref(desc, strong);
  if (!ref) return -EINVAL;
  if (out_desc) *out_desc = ref->desc;
  if (increment) return inc_ref(*ref, strong, nullptr);
  if (dec_ref(*ref, strong)) deleted = refs_.take(*ref);
  return 0;
}

// binder_inc_ref_for_node: this proc gets (or reuses) a ref to `node` and counts one more
// strong or weak reference on it.
int Proc::inc_ref_for_node(Node& node, bool strong, Thread* target_thread, RefData& data) {
  std::unique_ptr<Ref> failed;
  sync::LockGuard guard(outer_lock_);
  bool created = !refs_.find(node);
  Ref& ref = ref_for_node(node);
  data = {ref.debug_id, ref.desc};
  int ret = inc_ref(ref, strong, target_thread);
  if (ret && created) {
    // The target may have died meanwhile; the new, countless ref must not stay behind.
    cleanup_ref(ref);
    failed = refs_.take(ref);
  }
  return ret;
}

// binder_get_node_from_ref: the node behind handle `desc`, with a temporary reference.
NodeTmpRef Proc::get_node_from_ref(std::uint32_t desc, bool need_strong, std::uint32_t* strong,
                                   std::uint32_t* weak, RefData* data) {
  sync::LockGuard guard(outer_lock_);
  Ref* ref = get_ref(desc, need_strong);
  if (!ref) return {};
  assume_same_lock(outer_lock_, ref->outer_lock);
  if (strong) *strong = ref->strong;
  if (weak) *weak = ref->weak;
  if (data) *data = {ref->debug_id, ref->desc};
  ref->node->tmp_refs++;
  return NodeTmpRef(ref->node);
}

}  // namespace cused::core
