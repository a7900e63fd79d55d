// SPDX-License-Identifier: GPL-2.0-only
// Teardown: BINDER_THREAD_EXIT (S2.6) and the release of a whole proc (S1.9): every caller left
// waiting gets BR_DEAD_REPLY, every death registration on the proc's nodes fires.
#include <cerrno>

#include "core/driver.h"
#include "core/proc.h"
#include "core/wake.h"

namespace cused::core {

void Proc::thread_exited(pid_t tid) {
  WakeScope scope(tid);
  std::shared_ptr<Thread> thread;
  {
    sync::LockGuard guard(inner_lock_);
    auto it = threads_.find(tid);
    if (it == threads_.end()) return;
    thread = it->second;
  }
  release_thread(thread);
}

// binder_thread_release. Returns the number of transactions still on the thread's stack.
int Proc::release_thread(const std::shared_ptr<Thread>& thread) {
  std::shared_ptr<Transaction> send_reply;
  std::unique_ptr<PendingRead> parked;
  std::shared_ptr<PollWaiter> poller;
  std::vector<FreezeWaiter> drained;
  int active = 0;
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(*thread);
    threads_.erase(thread->tid);
    auto t = thread->transaction_stack;
    if (t) {
      sync::LockGuard txn_guard(t->lock);
      if (t->to_thread == thread) send_reply = t;
    }
    thread->is_dead = true;
    // Incoming calls lose their receiver (and their buffer), outgoing ones their sender: a reply
    // to them later fails down the chain (S4.6).
    while (t) {
      active++;
      sync::LockGuard txn_guard(t->lock);
      if (t->to_thread == thread) {
        outstanding_txns_--;
        t->to_proc = nullptr;
        t->to_thread = nullptr;
        if (t->buffer) {
          if (BufferState* state = buffer_state(*t->buffer)) state->transaction.reset();
          t->buffer = nullptr;
        }
        t = t->to_parent;
      } else if (t->from == thread) {
        t->from = nullptr;
        t = t->from_parent;
      } else {
        break;
      }
    }
    drained = take_drained_freeze_waiters();
    parked = unpark(*thread);
    // S11.7: a poll() waiter must not outlive the thread; it is told to look again.
    poller = std::move(thread->poll_waiter);
  }
  resume_drained(std::move(drained));
  if (poller) WakeScope::current().notify(std::move(poller));
  if (parked) finish_read(*thread, std::move(parked), 0);
  if (send_reply) send_failed_reply(send_reply, BR_DEAD_REPLY);
  release_work([&]() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    sync::LockGuard guard(inner_lock_);
    assume_locked(*thread);
    return thread->todo.pop_front();
  });
  return active;
}

// binder_release_work: queued calls fail back to their callers, everything else is dropped.
// The buffer of a transaction dropped here was never handed to userspace, so nobody could ever
// free it: it goes now. The C driver leaves it allocated until the proc is released, which for a
// thread that exits with a reply queued (S11.6) loses that space for the proc's lifetime; the
// Rust driver frees it with the transaction. Found by tests/fuzz (docs/reliability.md).
void Proc::release_work(const std::function<DequeuedWork()>& pop) {
  while (DequeuedWork work = pop()) {
    if (work->type != WorkType::kTransaction) continue;
    auto t = std::static_pointer_cast<Transaction>(work.pin());
    alloc::Buffer* buffer = t->get_buffer();
    cleanup_transaction(t, BR_DEAD_REPLY);
    // Undelivered, so its files were never installed: they go with the buffer's record.
    if (buffer && !buffer->allow_user_free()) free_buffer(nullptr, *buffer, nullptr);
  }
}

// binder_node_release: a node others still reference becomes dead (S6.8) and their death
// registrations fire (S7.2); queued oneways to it are dropped.
void Proc::release_node(const std::shared_ptr<Node>& node) {
  release_work([&]() {
    NodeInnerGuard guard(*node);
    return node->async_todo.pop_front();
  });
  sync::LockGuard node_guard(node->lock);
  {
    sync::LockGuard guard(inner_lock_);
    DequeuedWork dropped = WorkList::unlink(node->work);
    node->proc = nullptr;
    node->local_strong_refs = 0;
    node->local_weak_refs = 0;
  }
  for (Ref& ref : node->refs) {
    Proc& holder = ref.proc;
    assume_same_lock(node->lock, ref.node_lock);
    if (!ref.death) continue;
    sync::LockGuard guard(holder.inner_lock_);
    ref.death->type = WorkType::kDeadBinder;
    holder.todo_.push_back(*ref.death);
    holder.wakeup_proc();
  }
  if (!node->refs.empty()) driver_.add_dead_node(node);
}

void Proc::release_threads() {
  for (;;) {
    std::shared_ptr<Thread> thread;
    {
      sync::LockGuard guard(inner_lock_);
      if (threads_.empty()) return;
      thread = threads_.begin()->second;
    }
    release_thread(thread);
  }
}

void Proc::release_nodes() {
  for (;;) {
    std::shared_ptr<Node> node;
    {
      sync::LockGuard guard(inner_lock_);
      if (nodes_.empty()) return;
      node = std::move(nodes_.begin()->second);
      nodes_.erase(nodes_.begin());
      node->tmp_refs++;
    }
    release_node(node);
    put_node(*node);
  }
}

void Proc::release_refs() {
  for (;;) {
    std::unique_ptr<Ref> ref;
    sync::LockGuard guard(outer_lock_);
    if (refs_.empty()) return;
    Ref& first = *refs_.by_desc().begin()->second;
    cleanup_ref(first);
    ref = refs_.take(first);
  }
}

// binder_deferred_release (S1.9).
void Proc::release() {
  if (released_.exchange(true)) return;
  auto self = shared_from_this();
  WakeScope scope(pid_);
  driver_.remove_proc(pid_, *this);
  {
    sync::LockGuard guard(context_.lock);
    if (context_.manager && node_owner(*context_.manager).get() == this) {
      context_.manager->is_context_manager = false;
      context_.manager = nullptr;  // the remembered manager euid stays (S2.4)
    }
  }
  {
    sync::LockGuard guard(inner_lock_);
    is_dead_ = true;
    freeze_.set(false);
  }
  release_threads();
  release_nodes();
  release_refs();
  release_work([&]() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    sync::LockGuard guard(inner_lock_);
    return todo_.pop_front();
  });
  release_work([&]() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    sync::LockGuard guard(inner_lock_);
    return delivered_death_.pop_front();
  });
  release_work([&]() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    sync::LockGuard guard(inner_lock_);
    return delivered_freeze_.pop_front();
  });
}

}  // namespace cused::core
