// SPDX-License-Identifier: GPL-2.0-only
// BC_TRANSACTION / BC_REPLY (S4, binder_transaction): target resolution, the sender's stack
// rules, the buffer, delivery to the chosen thread, and the failure routing of S3.6.
#include "core/transaction.h"

#include <cerrno>
#include <cstring>
#include <limits>

#include "core/align.h"
#include "core/block_pool.h"
#include "core/driver.h"
#include "core/proc.h"
#include "core/trace_events.h"
#include "core/transaction_log.h"
#include "core/txn_plan.h"
#include "core/wake.h"

namespace cused::core {
namespace {

// binder_transaction's tracepoint: the transaction as built, before its buffer is allocated.
void trace_transaction(const Transaction& t, const Node* target_node, const Proc& target_proc,
                       const Thread* target_thread, bool reply) {
  trace::emit(TraceEventType::kTransaction, t.debug_id, target_node ? target_node->debug_id : 0,
              target_proc.pid(), target_thread ? target_thread->tid : 0, reply, t.code, t.flags);
}

// Who sent `t` and who receives it, as binder_txn_latency_free reads them under t->lock: a
// popped call has no sender any more (0:0); the receiving thread is known once one took it.
struct TxnEnds {
  pid_t from_proc = 0, from_thread = 0, to_proc = 0, to_thread = 0;
};
TxnEnds txn_ends(const Transaction& t) CUSED_REQUIRES(t.lock) {
  TxnEnds ends;
  if (t.from) {
    ends.from_proc = t.from->proc->pid();
    ends.from_thread = t.from->tid;
  }
  if (t.to_proc) ends.to_proc = t.to_proc->pid();
  if (t.to_thread) ends.to_thread = t.to_thread->tid;
  return ends;
}

// binder_txn_latency_free's tracepoint: `t` goes, from and to as `ends` read them.
void trace_latency_free(const Transaction& t, const TxnEnds& ends) {
  trace::emit(TraceEventType::kTxnLatencyFree, t.debug_id, ends.from_proc, ends.from_thread,
              ends.to_proc, ends.to_thread, t.code, t.flags);
}

}  // namespace

Transaction::Transaction(const Params& params)
    : Work(WorkType::kTransaction),
      debug_id(params.debug_id),
      from_pid(params.from_pid),
      from_tid(params.from_tid),
      sender_euid(params.sender_euid),
      code(params.code),
      flags(params.flags),
      is_async(!params.is_reply && (params.flags & TF_ONE_WAY)),
      is_reply(params.is_reply),
      priority(params.priority) {}

std::shared_ptr<Thread> Transaction::get_from() const {
  sync::LockGuard guard(lock);
  return from;
}

alloc::Buffer* Transaction::get_buffer() const {
  sync::LockGuard guard(lock);
  return buffer;
}

void Proc::transact(Thread& thread, UserMemory& memory, CallerFiles* files,
                    const binder_transaction_data& tr, bool reply, binder_size_t extra_buffers_size,
                    uid_t caller_euid) {
  TxnPlan plan;
  plan.reply = reply;
  plan.sender_files = files;
  const int debug_id = driver_.next_debug_id();
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    thread.ee = {static_cast<__u32>(debug_id), BR_OK, 0};
    thread.payload_hint = payload_hint_for(tr);
  }
  plan.t = make_pooled<Transaction>(
      transaction_pool_, Transaction::Params{debug_id, pid_, thread.tid, caller_euid, tr.code,
                                             tr.flags, reply, thread_nice(thread)});
  count_object(plan.t->counter, ObjStat::kTransaction);
  if (!reply && !(tr.flags & TF_ONE_WAY)) {
    sync::LockGuard guard(plan.t->lock);
    plan.t->from = thread.shared_from_this();
  }

  TxnError error = reply ? find_reply_target(thread, plan) : find_call_target(thread, tr, plan);
  if (!error && !reply) error = check_sender_stack(thread, tr, plan);
  if (!error) {
    {
      sync::LockGuard guard(plan.t->lock);
      plan.t->to_proc = plan.target_proc;
      plan.t->to_thread = plan.target_thread;
    }
    plan.t->target_node = plan.target_node.shared();
    if (plan.target_proc->android_priority()) {
      plan.t->sched_priority = sender_sched_priority(thread, tr.flags, *plan.target_proc);
      plan.t->is_nested = !reply && plan.target_thread != nullptr;
    }
    plan.tcomplete = make_pooled<CompleteWork>(complete_pool_);
    count_object(plan.tcomplete->counter, ObjStat::kTransactionComplete);
    trace_transaction(*plan.t, plan.target_node ? &*plan.target_node : nullptr, *plan.target_proc,
                      plan.target_thread.get(), reply);
    error = fill_buffer(thread, memory, tr, extra_buffers_size, plan);
  }
  if (!error) error = deliver(thread, plan);
  record_transaction(thread.tid, tr, plan, error);
  if (error) fail_transaction(thread, plan, error);
}

// The payload of `tr` as a guess for this thread's next transaction (UserReader). Not guessed: a
// payload too large to be worth it, or one inside the proc's own binder mapping, whose bytes the
// commands before the next transaction can change (BC_FREE_BUFFER clears a TF_CLEAR_BUF buffer)
// and which must therefore be read when the transaction runs, as the kernel does.
PayloadHint Proc::payload_hint_for(const binder_transaction_data& tr) const {
  PayloadHint hint{tr.data.ptr.buffer, tr.data_size, tr.data.ptr.offsets, tr.offsets_size};
  if (tr.data_size > PayloadHint::kMaxBytes || tr.offsets_size > PayloadHint::kMaxBytes ||
      hint.data_size + hint.offsets_size > PayloadHint::kMaxBytes)
    return {};
  const std::uint64_t mapping = alloc_->vm_start();
  auto in_mapping = [&](std::uint64_t addr, std::uint64_t size) {
    return size && mapping && addr < mapping + alloc::kMaxBufferSpace && mapping < addr + size;
  };
  auto wraps = [](std::uint64_t addr, std::uint64_t size) { return addr + size < addr; };
  if (in_mapping(hint.data, hint.data_size) || in_mapping(hint.offsets, hint.offsets_size) ||
      wraps(hint.data, hint.data_size) || wraps(hint.offsets, hint.offsets_size))
    return {};
  return hint;
}

// S4.6: a reply answers the incoming call on top of this thread's stack and goes to the thread
// waiting for it.
TxnError Proc::find_reply_target(Thread& thread, TxnPlan& plan) {
  std::shared_ptr<Transaction> in_reply_to;
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    in_reply_to = thread.transaction_stack;
  }
  if (!in_reply_to) return {BR_FAILED_REPLY, -EPROTO};
  // S4.12: the replier gets its nice back first, even if the stack turns out to be wrong. The
  // Android kernel restores later, once the reply is delivered or has failed.
  if (!android_priority())
    set_nice(thread, in_reply_to->saved_priority.load(std::memory_order_relaxed));
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    if (thread.transaction_stack != in_reply_to) return {BR_FAILED_REPLY, -EPROTO};
    sync::LockGuard txn_guard(in_reply_to->lock);
    if (in_reply_to->to_thread.get() != &thread) return {BR_FAILED_REPLY, -EPROTO};
    // Popped even if the reply fails from here on.
    thread.transaction_stack = in_reply_to->to_parent;
    plan.in_reply_to = std::move(in_reply_to);
  }
  auto target_thread = plan.in_reply_to->get_from();
  if (!target_thread) return {BR_DEAD_REPLY, 0};  // the caller is gone: S4.6 failure routing
  sync::LockGuard guard(target_thread->inner_lock);
  if (plan.in_reply_to->get_from() != target_thread) return {BR_DEAD_REPLY, 0};
  if (target_thread->transaction_stack != plan.in_reply_to) {
    plan.in_reply_to = nullptr;
    return {BR_FAILED_REPLY, -EPROTO};
  }
  plan.target_proc = target_thread->proc;
  plan.target_thread = std::move(target_thread);
  return {};
}

// binder_get_node_refs_for_txn: a live node's owner, with a local strong and a temporary
// reference on the node so that neither goes away under the transaction (S4.1).
NodeTmpRef Proc::node_refs_for_txn(Node& node, std::shared_ptr<Proc>& target_proc) {
  NodeInnerGuard guard(node);
  if (!guard.owner()) return {};
  inc_node_nilocked(node, true, false, nullptr);
  node.tmp_refs++;
  target_proc = guard.owner()->shared_from_this();
  return NodeTmpRef(node.shared_from_this());
}

// S4.1
TxnError Proc::find_call_target(Thread&, const binder_transaction_data& tr, TxnPlan& plan) {
  std::uint32_t error = BR_DEAD_REPLY;
  if (tr.target.handle) {
    sync::LockGuard guard(outer_lock_);
    if (Ref* ref = get_ref(tr.target.handle, true))
      plan.target_node = node_refs_for_txn(*ref->node, plan.target_proc);
    else
      error = BR_FAILED_REPLY;  // no such handle, or only a weak one
  } else {
    sync::LockGuard guard(context_.lock);
    if (context_.manager) plan.target_node = node_refs_for_txn(*context_.manager, plan.target_proc);
  }
  if (!plan.target_node) return {error, -EINVAL};
  plan.holds_target_strong = true;
  // The manager's own process may not call handle 0; nor may a proc call itself.
  if (!tr.target.handle && plan.target_proc->pid_ == pid_) return {BR_FAILED_REPLY, -EINVAL};
  if (plan.target_proc.get() == this) return {BR_FAILED_REPLY, -EINVAL};
  return {};
}

// S4.3 / S4.4: a sync call from a thread must not skip an incoming transaction queued to it,
// may only be made while serving the call on top of its stack, and goes back to a thread of the
// target that waits for us somewhere down the chain (nested calls).
TxnError Proc::check_sender_stack(Thread& thread, const binder_transaction_data& tr,
                                  TxnPlan& plan) {
  if (tr.flags & TF_ONE_WAY) return {};
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  if (Work* head = thread.todo.front(); head && head->type == WorkType::kTransaction)
    return {BR_FAILED_REPLY, -EPROTO};
  auto tmp = thread.transaction_stack;
  if (!tmp) return {};
  {
    sync::LockGuard txn_guard(tmp->lock);
    if (tmp->to_thread.get() != &thread) return {BR_FAILED_REPLY, -EPROTO};
  }
  for (; tmp; tmp = tmp->from_parent) {
    auto from = tmp->get_from();
    if (from && from->proc == plan.target_proc) {
      plan.target_thread = std::move(from);
      break;
    }
  }
  return {};
}

// S4.9 / S4.10 / S4.11: the buffer in the target, the security context, then the payload.
TxnError Proc::fill_buffer(Thread& thread, UserMemory& memory, const binder_transaction_data& tr,
                           binder_size_t extra_buffers_size, TxnPlan& plan) {
  Proc& target = *plan.target_proc;
  if (plan.target_node && plan.target_node->txn_security_ctx) {
    if (int ret = security_label(plan.secctx)) return {BR_FAILED_REPLY, ret};
    binder_size_t added = align8(plan.secctx.size());
    if (extra_buffers_size > std::numeric_limits<binder_size_t>::max() - added)
      return {BR_FAILED_REPLY, -EINVAL};
    extra_buffers_size += added;
  }
  if (!target.ensure_mapped()) return {BR_DEAD_REPLY, -ESRCH};
  const bool oneway = !plan.reply && (plan.t->flags & TF_ONE_WAY);
  alloc::NewBufferResult result =
      target.alloc_->new_buffer(tr.data_size, tr.offsets_size, extra_buffers_size, oneway, pid_);
  if (!result) return {result.error == -ESRCH ? BR_DEAD_REPLY : BR_FAILED_REPLY, result.error};
  alloc::Buffer& buffer = *result.buffer;
  plan.buffer = &buffer;
  buffer.set_debug_id(plan.t->debug_id);
  buffer.set_clear_on_free(plan.t->flags & TF_CLEAR_BUF);
  alloc::trace_buffer(TraceEventType::kAllocBuf, buffer);
  // The buffer owns the target node's local strong reference from now on (S6.7).
  plan.state.target_node = plan.target_node.shared();
  plan.holds_target_strong = false;
  {
    sync::LockGuard guard(plan.t->lock);
    plan.t->buffer = &buffer;
  }
  if (!plan.secctx.empty()) {
    std::size_t offset = buffer.size() - align8(plan.secctx.size());
    std::memcpy(target.alloc_->contents(buffer).data() + offset, plan.secctx.data(),
                plan.secctx.size());
    plan.t->security_ctx = target.alloc_->user_address(buffer) + offset;
  }
  return translate_objects(thread, memory, tr, plan);
}

// Hands the transaction to its target and queues the sender's completion (S3.5).
TxnError Proc::deliver(Thread& thread, TxnPlan& plan) {
  plan.t->carries_files = !plan.state.files.empty();
  if (plan.buffer->oneway_spam_suspect())
    plan.tcomplete->type = WorkType::kTransactionOnewaySpamSuspect;
  if (plan.reply) return deliver_reply(thread, plan);
  if (plan.t->is_async) return deliver_oneway(thread, plan);
  return deliver_call(thread, plan);
}

// S4.6: the replier hears its completion at once (or, with TF_DEFER_COMPLETE, with whatever
// wakes it next); the reply goes straight to the caller's queue, frozen or not.
TxnError Proc::deliver_reply(Thread& thread, TxnPlan& plan) {
  Transaction& t = *plan.t;
  {
    sync::LockGuard guard(inner_lock_);
    if (defer_complete_ && (t.flags & uapi::TF_DEFER_COMPLETE))
      enqueue_deferred_thread_work(thread, *plan.tcomplete);
    else
      enqueue_thread_work(thread, *plan.tcomplete);
    plan.tcomplete_queued = true;
  }
  Thread& target_thread = *plan.target_thread;
  Proc& target = *plan.target_proc;
  if (android_priority() && plan.in_reply_to->is_nested) {
    // The caller may call this thread again as soon as it wakes, before the restore below.
    SchedPriority saved;
    {
      sync::LockGuard guard(plan.in_reply_to->lock);
      saved = plan.in_reply_to->saved_sched_priority;
    }
    sync::LockGuard guard(thread.prio_lock);
    thread.prio_state = Thread::PrioState::kPending;
    thread.prio_next = saved;
  }
  {
    sync::LockGuard guard(target_thread.inner_lock);
    assume_same_lock(target_thread.inner_lock, target.inner_lock_);
    if (target_thread.is_dead) return {BR_DEAD_REPLY, 0};
    plan.state.transaction = plan.t;
    target.file_buffer_state(plan.buffer, std::move(plan.state));
    pop_transaction(target_thread, *plan.in_reply_to);
    target.enqueue_thread_work(target_thread, t);
    target.outstanding_txns_++;
    target.wake_thread(target_thread);
  }
  if (android_priority()) restore_after_reply(thread, *plan.in_reply_to);
  free_transaction(*plan.in_reply_to);
  return {};
}

// A sync call goes on the sender's stack before the target can see it; its completion is
// deferred: the caller does not wake for it, it comes with the reply (S3.5).
TxnError Proc::deliver_call(Thread& thread, TxnPlan& plan) {
  Transaction& t = *plan.t;
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    enqueue_deferred_thread_work(thread, *plan.tcomplete);
    plan.tcomplete_queued = true;
    t.from_parent = thread.transaction_stack;
    thread.transaction_stack = plan.t;
  }
  std::uint32_t error =
      plan.target_proc->proc_transaction(plan.t, plan.target_thread.get(), plan.state);
  if (!error) return {};
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  pop_transaction(thread, t);
  return {error, 0};
}

// A oneway's completion is queued at once; a frozen target still takes it (S4.13).
TxnError Proc::deliver_oneway(Thread& thread, TxnPlan& plan) {
  std::uint32_t error = plan.target_proc->proc_transaction(plan.t, nullptr, plan.state);
  sync::LockGuard guard(inner_lock_);
  if (error == uapi::BR_TRANSACTION_PENDING_FROZEN)
    plan.tcomplete->type = WorkType::kTransactionPending;
  enqueue_thread_work(thread, *plan.tcomplete);
  plan.tcomplete_queued = true;
  if (error && error != uapi::BR_TRANSACTION_PENDING_FROZEN) return {error, 0};
  return {};
}

// binder_proc_transaction, on the target: oneways to a node with one in flight wait on the
// node's async queue (S4.5); otherwise the waiting thread picked (or given) gets it, else the
// proc queue and its poll threads. Returns 0, BR_DEAD_REPLY, BR_FROZEN_REPLY or
// BR_TRANSACTION_PENDING_FROZEN.
std::uint32_t Proc::proc_transaction(const std::shared_ptr<Transaction>& t, Thread* thread,
                                     BufferState& state) {
  std::shared_ptr<Transaction> outdated;
  std::uint32_t result = queue_transaction(t, thread, state, outdated);
  // Freed after the locks, as the kernel does to keep them short.
  if (outdated) discard_outdated_transaction(outdated);
  return result;
}

std::uint32_t Proc::queue_transaction(const std::shared_ptr<Transaction>& t, Thread* thread,
                                      BufferState& state, std::shared_ptr<Transaction>& outdated) {
  Node& node = *t->target_node;
  const bool oneway = t->is_async;
  bool pending_async = false;
  bool frozen = false;
  sync::LockGuard node_guard(node.lock);
  if (oneway) {
    if (node.has_async_transaction)
      pending_async = true;
    else
      node.has_async_transaction = true;
  }
  sync::LockGuard guard(inner_lock_);
  if (freeze_.frozen) {
    frozen = true;
    freeze_.sync_recv |= !oneway;
    freeze_.async_recv |= oneway;
  }
  if ((frozen && !oneway) || is_dead_ || (thread && thread_is_dead(*thread)))
    return frozen ? BR_FROZEN_REPLY : BR_DEAD_REPLY;
  if (!thread && !pending_async) thread = select_thread();
  state.transaction = t;
  file_buffer_state(t->get_buffer(), std::move(state));
  if (thread) {
    // The Android kernel raises the thread it chose before it wakes (binder_proc_transaction).
    if (android_priority()) transaction_priority(*thread, *t, node);
    enqueue_thread_work(*thread, *t);
  } else if (!pending_async) {
    todo_.push_back(*t);
  } else {
    // S4.13 TF_UPDATE_TXN: a newer state supersedes the one still waiting for the frozen proc.
    if ((t->flags & TF_UPDATE_TXN) && frozen) {
      if ((outdated = find_outdated_transaction(node, *t))) {
        DequeuedWork superseded = WorkList::unlink(*outdated);
        outstanding_txns_--;
      }
    }
    node.async_todo.push_back(*t);
  }
  if (!pending_async) wakeup_thread_or_poll(thread);
  outstanding_txns_++;
  return oneway && frozen ? uapi::BR_TRANSACTION_PENDING_FROZEN : 0;
}

// The end of binder_transaction's error path: undo what was built, then tell the right thread.
// A failed reply is never reported to the replier (it gets its completion, S3.6); the caller it
// was meant for gets the error, or the first live thread down its chain.
void Proc::fail_transaction(Thread& thread, TxnPlan& plan, TxnError error) {
  if (plan.tcomplete_queued) dequeue_work(*plan.tcomplete);
  if (plan.buffer) {
    {
      sync::LockGuard guard(plan.t->lock);
      plan.t->buffer = nullptr;
    }
    alloc::trace_buffer(TraceEventType::kFailedBufferRelease, *plan.buffer);
    // S5.7: the files taken so far are dropped with the record; none was installed.
    plan.target_proc->release_objects(nullptr, plan.state, nullptr);
    plan.target_proc->alloc_->free_buffer(*plan.buffer);
  } else if (plan.holds_target_strong) {
    dec_node(*plan.target_node, true, false);
  }
  plan.target_node.reset();
  // The kernel's error path frees a transaction it traced (its target was found) with
  // binder_txn_latency_free's event too, before the caller hears of the failure.
  if (plan.tcomplete && trace::enabled()) {
    TxnEnds ends;
    {
      sync::LockGuard guard(plan.t->lock);
      ends = txn_ends(*plan.t);
    }
    trace_latency_free(*plan.t, ends);
  }
  if (plan.in_reply_to) {
    if (android_priority()) restore_after_reply(thread, *plan.in_reply_to);
    set_txn_from_error(*plan.in_reply_to, plan.t->debug_id, error.br, error.param);
    {
      sync::LockGuard guard(inner_lock_);
      assume_locked(thread);
      thread.return_error_cmd = BR_TRANSACTION_COMPLETE;
      enqueue_thread_work(thread, thread.return_error);
    }
    send_failed_reply(plan.in_reply_to, error.br);
    return;
  }
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  thread.ee = {static_cast<__u32>(plan.t->debug_id), error.br, error.param};
  thread.return_error_cmd = error.br;
  enqueue_thread_work(thread, thread.return_error);
}

// binder_pop_transaction_ilocked
void Proc::pop_transaction(Thread& target_thread, Transaction& t) {
  target_thread.transaction_stack = t.from_parent;
  sync::LockGuard guard(t.lock);
  t.from = nullptr;
}

// binder_send_failed_reply: the caller of `t` gets `error` as its reply. When that caller is
// gone, the failure moves down the chain to whoever waits on it.
void Proc::send_failed_reply(std::shared_ptr<Transaction> t, std::uint32_t error) {
  while (t) {
    if (auto target_thread = t->get_from()) {
      Proc& target = *target_thread->proc;
      bool delivered = false;
      {
        sync::LockGuard guard(target_thread->inner_lock);
        assume_same_lock(target_thread->inner_lock, target.inner_lock_);
        if (t->get_from() == target_thread) {
          pop_transaction(*target_thread, *t);
          // A second pending reply error is dropped (S4.6).
          if (target_thread->reply_error_cmd == BR_OK) {
            target_thread->reply_error_cmd = error;
            target.enqueue_thread_work(*target_thread, target_thread->reply_error);
            target.wake_thread(*target_thread);
          }
          delivered = true;
        }
      }
      if (delivered) return free_transaction(*t);
    }
    auto next = t->from_parent;
    free_transaction(*t);
    t = std::move(next);
  }
}

// binder_cleanup_transaction: an undelivered call fails back to its caller; anything else just
// goes.
void Proc::cleanup_transaction(const std::shared_ptr<Transaction>& t, std::uint32_t error) {
  if (t->target_node && !t->is_async)
    send_failed_reply(t, error);
  else
    free_transaction(*t);
}

// binder_free_transaction: the target stops counting it, and its buffer forgets it.
void Proc::free_transaction(Transaction& t) {
  std::shared_ptr<Proc> target;
  alloc::Buffer* buffer;
  TxnEnds ends;
  {
    sync::LockGuard guard(t.lock);
    if (trace::enabled()) ends = txn_ends(t);
    target = std::move(t.to_proc);
    buffer = t.buffer;
  }
  trace_latency_free(t, ends);
  if (!target) return;
  std::vector<FreezeWaiter> drained;
  {
    sync::LockGuard guard(target->inner_lock_);
    target->outstanding_txns_--;
    drained = target->take_drained_freeze_waiters();
    if (BufferState* state = buffer ? target->buffer_state(*buffer) : nullptr;
        state && state->transaction.lock().get() == &t)
      state->transaction.reset();
  }
  target->resume_drained(std::move(drained));
}

BufferState* Proc::buffer_state(const alloc::Buffer& buffer) {
  auto it = buffer_states_.find(&buffer);
  return it == buffer_states_.end() ? nullptr : &it->second;
}

BufferState Proc::take_buffer_state(const alloc::Buffer& buffer) {
  auto it = buffer_states_.find(&buffer);
  if (it == buffer_states_.end()) return {};
  BufferStates::node_type node = buffer_states_.extract(it);
  BufferState state = std::move(node.mapped());
  if (spare_states_.size() < spare_states_.capacity()) spare_states_.push_back(std::move(node));
  return state;
}

void Proc::file_buffer_state(const alloc::Buffer* buffer, BufferState state) {
  if (spare_states_.empty()) {
    buffer_states_.emplace(buffer, std::move(state));
    return;
  }
  BufferStates::node_type node = std::move(spare_states_.back());
  spare_states_.pop_back();
  node.key() = buffer;
  node.mapped() = std::move(state);
  buffer_states_.insert(std::move(node));
}

// binder_set_txn_from_error: a reply that failed on the replier's side is recorded for the
// caller, unless it already holds an error (S2.14).
void Proc::set_txn_from_error(Transaction& t, int id, std::uint32_t command, std::int32_t param) {
  auto from = t.get_from();
  if (!from) return;
  sync::LockGuard guard(from->inner_lock);
  if (t.get_from() != from) return;
  if (from->ee.command == BR_OK) from->ee = {static_cast<__u32>(id), command, param};
}

void Proc::record_transaction(pid_t tid, const binder_transaction_data& tr, const TxnPlan& plan,
                              const TxnError& error) {
  using CallType = TransactionLogEntry::CallType;
  TransactionLogEntry e;
  e.debug_id = plan.t->debug_id;
  e.call_type = plan.reply                ? CallType::kReply
                : (tr.flags & TF_ONE_WAY) ? CallType::kAsync
                                          : CallType::kCall;
  e.from_proc = pid();
  e.from_thread = tid;
  e.to_proc = plan.target_proc ? plan.target_proc->pid() : 0;
  e.to_thread = plan.target_thread ? plan.target_thread->tid : 0;
  e.context_name = device().name();
  const Node* node = plan.t->target_node ? plan.t->target_node.get()
                     : plan.target_node  ? &*plan.target_node
                                         : nullptr;
  e.to_node = node ? node->debug_id : 0;
  e.target_handle = tr.target.handle;
  e.data_size = tr.data_size;
  e.offsets_size = tr.offsets_size;
  if (error) {
    e.return_error = error.br;
    e.return_error_param = error.param;
    e.return_error_line = static_cast<int>(error.line);
  }
  driver_.transaction_log().add(e);
  if (error) driver_.failed_transaction_log().add(e);
}

}  // namespace cused::core
