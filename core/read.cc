// SPDX-License-Identifier: GPL-2.0-only
// The read half of BINDER_WRITE_READ (S3.2, binder_thread_read), with its wait turned into a
// parked request (wake.h); poll (S1.10), flush (S1.8) and interrupts (S1.12).
#include <cerrno>
#include <cstring>

#include "core/align.h"
#include "core/freeze_notification.h"
#include "core/proc.h"
#include "core/trace_events.h"
#include "core/wake.h"

namespace cused::core {
namespace {

// S3.2 step 4: a read stops when less than a BR_ code plus the largest payload
// (binder_transaction_data_secctx) is left, even for smaller items.
constexpr std::uint64_t kReadItemReserve =
    sizeof(std::uint32_t) + sizeof(binder_transaction_data_secctx);

template <typename T>
std::span<const std::byte> bytes_of(const T& value) {
  return std::as_bytes(std::span<const T, 1>(&value, 1));
}

// binder_stat_br: every BR_ code a read returns is counted (S10.6 `stats`), but the BR_NOOP that
// opens a read.
void put_return(Proc& proc, PendingRead& read, std::uint32_t cmd) {
  proc.count_return(cmd);
  read.put(cmd);
}

}  // namespace

void Proc::start_read(const std::shared_ptr<Thread>& thread, std::unique_ptr<PendingRead> read) {
  read->pos = read->out_start = read->bwr.read_consumed;
  if (read->bwr.read_consumed == 0) read->put(std::uint32_t{BR_NOOP});
  run_read(thread, std::move(read));
}

void Proc::resume_read(const std::shared_ptr<Thread>& thread, std::unique_ptr<PendingRead> read) {
  // A caller that stopped waiting by itself (a killed `cused run` program: its notification is
  // gone) gets no work: it stays queued for another thread, as for a read the kernel's wait left
  // with -ERESTARTSYS.
  trace::TaskScope task({thread->tid, pid_});
  if (read->completion->abandoned()) return finish_read(*thread, std::move(read), -EINTR);
  read->resumed = true;
  run_read(thread, std::move(read));
}

// From binder_thread_read's `retry:` label: wait for work (park), then emit items until one ends
// the read or nothing is left.
void Proc::run_read(const std::shared_ptr<Thread>& thread_ptr, std::unique_ptr<PendingRead> read) {
  Thread& thread = *thread_ptr;
  for (;;) {
    bool wait_for_proc_work;
    long error = 0;
    bool released = false;
    std::unique_ptr<PendingRead> superseded;
    {
      sync::LockGuard guard(inner_lock_);
      assume_locked(thread);
      wait_for_proc_work = thread.available_for_proc_work();
      if (!std::exchange(read->resumed, false))
        trace::emit(TraceEventType::kWaitForWork, wait_for_proc_work,
                    thread.transaction_stack != nullptr, !thread.todo.empty());
      if (!has_work(thread, wait_for_proc_work)) {
        if (read->nonblock) {
          error = -EAGAIN;  // S1.11
        } else if (read->completion->interrupted()) {
          error = -EINTR;  // S1.12: the interrupt came before the read could park
        } else if (thread.is_dead) {
          // S1.9 / S2.6: a read woken just before its thread was released runs after the release
          // answered the thread's parked reads; parking now would leave it parked forever.
          released = true;
        } else {
          // A tid makes one request at a time; should an older one still be parked here (no
          // real client can do that), it ends as if interrupted.
          superseded = unpark(thread);
          thread.looper |= kLooperWaiting;
          thread.parked = std::move(read);
          if (wait_for_proc_work) waiting_threads_.push_front(thread);
        }
      }
    }
    // S4.12: a thread that may take proc work goes back to the proc's default nice, whether it
    // waits or not (binder_thread_read, before its wait).
    if (wait_for_proc_work) {
      if (android_priority())
        set_sched_priority(thread, default_sched_priority_, false);
      else
        set_nice(thread, default_priority_);
    }
    if (superseded) finish_read(thread, std::move(superseded), -EINTR);
    if (!read) return;
    if (error || released) return finish_read(thread, std::move(read), error);
    ReadStep step;
    while ((step = emit_next(thread, *read, wait_for_proc_work)) == ReadStep::kContinue) {
    }
    if (step == ReadStep::kFault) return finish_read(thread, std::move(read), -EFAULT);
    if (step == ReadStep::kEmpty) {
      // S3.2 step 5: a wake-up that found nothing is invisible, unless the read must return.
      sync::LockGuard guard(inner_lock_);
      assume_locked(thread);
      if (read->pos == 4 && !thread.need_return) continue;
    }
    maybe_spawn_looper(thread, *read);
    return finish_read(thread, std::move(read), 0);
  }
}

// One iteration of binder_thread_read's loop: the head of the thread's queue, else (when the
// thread may take proc work) the head of the proc's queue. Transactions and node work are
// emitted after the inner lock is dropped; the dequeued item keeps its owner alive meanwhile.
Proc::ReadStep Proc::emit_next(Thread& thread, PendingRead& read, bool wait_for_proc_work) {
  DequeuedWork work;
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    WorkList* list = !thread.todo.empty()                     ? &thread.todo
                     : (wait_for_proc_work && !todo_.empty()) ? &todo_
                                                              : nullptr;
    if (!list) return ReadStep::kEmpty;
    if (read.space_left() < kReadItemReserve) return ReadStep::kDone;
    work = list->pop_front();
    if (thread.todo.empty()) thread.process_todo = false;
    switch (work->type) {
      case WorkType::kTransaction:
      case WorkType::kNode:
        break;
      case WorkType::kReturnError: {
        std::uint32_t& slot = thread.error_cmd(work.as<ErrorWork>());
        put_return(*this, read, std::exchange(slot, std::uint32_t{BR_OK}));
        return ReadStep::kContinue;
      }
      case WorkType::kTransactionComplete:
      case WorkType::kTransactionPending:
      case WorkType::kTransactionOnewaySpamSuspect:
        put_return(*this, read, completion_code(work->type));
        return ReadStep::kContinue;
      case WorkType::kDeadBinder:
      case WorkType::kDeadBinderAndClear:
      case WorkType::kClearDeathNotification: {
        auto& death = work.as<Death>();
        bool clear_done = work->type == WorkType::kClearDeathNotification;
        // A delivered death waits on delivered_death_ for BC_DEAD_BINDER_DONE (S7.2).
        if (!clear_done) delivered_death_.push_back(death);
        put_return(*this, read,
                   clear_done ? std::uint32_t{BR_CLEAR_DEATH_NOTIFICATION_DONE}
                              : std::uint32_t{BR_DEAD_BINDER});
        read.put(death.cookie);
        // S3.2 step 6: userspace may want to transact in response to a death.
        return clear_done ? ReadStep::kContinue : ReadStep::kDone;
      }
      case WorkType::kFrozenBinder: {
        // S7.7: waits on delivered_freeze_ for BC_FREEZE_NOTIFICATION_DONE, and ends the read.
        auto& freeze = work.as<FreezeNotification>();
        assume_same_lock(inner_lock_, freeze.inner_lock);
        freeze.sent = true;
        delivered_freeze_.push_back(freeze);
        put_return(*this, read, uapi::BR_FROZEN_BINDER);  // binder_stat_br counts it (S10.6)
        read.put(uapi::binder_frozen_state_info{freeze.cookie, freeze.is_frozen, 0});
        return ReadStep::kDone;
      }
      case WorkType::kClearFreezeNotification:
        put_return(*this, read, uapi::BR_CLEAR_FREEZE_NOTIFICATION_DONE);
        read.put(work.as<FreezeNotification>().cookie);
        return ReadStep::kContinue;
      default:
        return ReadStep::kContinue;
    }
  }
  if (work->type == WorkType::kTransaction)
    return emit_transaction(thread, read, std::static_pointer_cast<Transaction>(work.pin()));
  return emit_node_work(read, work.as<NodeWork>().node);
}

// S3.4 / S4.13 / S9.7: what the sender hears for its transaction.
std::uint32_t Proc::completion_code(WorkType type) {
  if (type == WorkType::kTransactionOnewaySpamSuspect && oneway_spam_detection_enabled_)
    return BR_ONEWAY_SPAM_SUSPECT;
  if (type == WorkType::kTransactionPending) return uapi::BR_TRANSACTION_PENDING_FROZEN;
  return BR_TRANSACTION_COMPLETE;
}

// S6.5: the node's counters decide what its owner must take or drop, in this order.
Proc::ReadStep Proc::emit_node_work(PendingRead& read, Node& node) {
  bool strong, weak, had_strong, had_weak;
  std::shared_ptr<Node> freed;
  {
    NodeInnerGuard guard(node);
    // The owner died since the work was queued: there is nobody left to tell.
    if (guard.owner() != this) return ReadStep::kContinue;
    assume_inner_locked();
    strong = node.wants_strong();
    weak = node.wants_weak();
    had_strong = node.has_strong_ref;
    had_weak = node.has_weak_ref;
    if (weak && !had_weak) {
      node.has_weak_ref = node.pending_weak_ref = true;
      node.local_weak_refs++;
    }
    if (strong && !had_strong) {
      node.has_strong_ref = node.pending_strong_ref = true;
      node.local_strong_refs++;
    }
    if (!strong && had_strong) node.has_strong_ref = false;
    if (!weak && had_weak) node.has_weak_ref = false;
    if (!weak && !strong) {
      DequeuedWork requeued = WorkList::unlink(node.work);
      auto it = nodes_.find(node.ptr);
      if (it != nodes_.end() && it->second.get() == &node) {
        freed = std::move(it->second);
        nodes_.erase(it);
      }
    }
  }
  auto put_node_cmd = [&](std::uint32_t cmd) {
    put_return(*this, read, cmd);
    read.put(binder_ptr_cookie{node.ptr, node.cookie});
  };
  if (weak && !had_weak) put_node_cmd(BR_INCREFS);
  if (strong && !had_strong) put_node_cmd(BR_ACQUIRE);
  if (!strong && had_strong) put_node_cmd(BR_RELEASE);
  if (!weak && had_weak) put_node_cmd(BR_DECREFS);
  return ReadStep::kContinue;
}

// A transaction or reply ends the read (S3.2 step 6). A sync call goes on the receiving thread's
// stack: it must reply from this thread (S4.4). Its files are installed in the reader first
// (S5.6), as binder_thread_read does before it copies the transaction out.
Proc::ReadStep Proc::emit_transaction(Thread& thread, PendingRead& read,
                                      const std::shared_ptr<Transaction>& t) {
  alloc::Buffer* buffer = t->get_buffer();
  if (!buffer) {
    free_transaction(*t);
    return ReadStep::kContinue;
  }
  if (t->carries_files && install_files(read, *buffer) != 0)
    return drop_undeliverable(thread, read, t, *buffer);
  const Node* target = t->target_node.get();
  binder_transaction_data_secctx tr{};
  binder_transaction_data& data = tr.transaction_data;
  std::uint32_t cmd = target ? BR_TRANSACTION : BR_REPLY;
  if (target && android_priority())
    transaction_priority(thread, *t, *target);  // unless done when it was queued to this thread
  else if (target)
    inherit_priority(thread, *t, *target);
  data.target.ptr = target ? target->ptr : 0;
  data.cookie = target ? target->cookie : 0;
  data.code = t->code;
  data.flags = t->flags;
  data.sender_euid = t->sender_euid;
  // S4.8: the sender's pid only for a sync call whose sending thread still exists.
  auto from = t->get_from();
  data.sender_pid = from ? from->proc->pid() : 0;
  data.data_size = buffer->data_size();
  data.offsets_size = buffer->offsets_size();
  data.data.ptr.buffer = alloc_->user_address(*buffer);
  data.data.ptr.offsets = data.data.ptr.buffer + align8(buffer->data_size());
  tr.secctx = t->security_ctx;
  std::size_t size = sizeof(data);
  if (t->security_ctx) {
    cmd = BR_TRANSACTION_SEC_CTX;
    size = sizeof(tr);
  }
  read.put(cmd);
  read.put(&tr, size);
  if (read.flush()) {
    // S3.2 step 7: a transaction that cannot be copied out fails back to its sender. Its buffer
    // goes as if freed by the reader, FDA fds and all (FD objects' fds stay, as in the kernel).
    cleanup_transaction(t, BR_FAILED_REPLY);
    free_buffer(&thread, *buffer, read.completion->caller_files());
    return ReadStep::kFault;
  }
  // Counted once it reached the reader, as the kernel does, after the transaction's own
  // tracepoint.
  trace::emit(TraceEventType::kTransactionReceived, t->debug_id);
  count_return(cmd);
  buffer->set_allow_user_free();
  if (cmd != BR_REPLY && !t->is_async) {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    sync::LockGuard txn_guard(t->lock);
    t->to_parent = thread.transaction_stack;
    t->to_thread = thread.shared_from_this();
    thread.transaction_stack = t;
  } else {
    free_transaction(*t);
  }
  return ReadStep::kDone;
}

// S5.6: the reader could not take the transaction's files. A sync call fails back to its sender
// (BR_FAILED_REPLY, no extended error) and the reader reads on; a oneway just goes; a reply is
// BR_FAILED_REPLY for the reader instead of BR_REPLY. The buffer is freed either way.
Proc::ReadStep Proc::drop_undeliverable(Thread& thread, PendingRead& read,
                                        const std::shared_ptr<Transaction>& t,
                                        alloc::Buffer& buffer) {
  const bool reply = !t->target_node;
  cleanup_transaction(t, BR_FAILED_REPLY);
  free_buffer(&thread, buffer, read.completion->caller_files());
  if (!reply) return ReadStep::kContinue;
  put_return(*this, read, BR_FAILED_REPLY);
  return ReadStep::kDone;
}

// S3.3: ask for one more pool thread when nobody waits for proc work and the pool is not full.
void Proc::maybe_spawn_looper(Thread& thread, PendingRead& read) {
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    if (requested_threads_ != 0 || !waiting_threads_.empty() ||
        requested_threads_started_ >= max_threads_ || !thread.is_looper())
      return;
    requested_threads_++;
  }
  const std::uint32_t spawn = BR_SPAWN_LOOPER;
  count_return(spawn);
  if (read.out_start == 0 && read.out.size() >= sizeof spawn) {
    std::memcpy(read.out.data(), &spawn, sizeof spawn);
  } else {
    read.completion->user_memory().write(read.bwr.read_buffer, &spawn, sizeof spawn);
  }
}

// The end of the read and of its ioctl: the buffer and bwr go back to the caller.
void Proc::finish_read(Thread& thread, std::unique_ptr<PendingRead> read, long result) {
  // Whichever daemon thread ends the read (an interrupt, a release), it ends the reader's ioctl.
  trace::TaskScope task({thread.tid, pid_});
  if (result == 0) {
    if (read->flush())
      result = -EFAULT;
    else
      read->bwr.read_consumed = read->pos;
  }
  trace::emit(TraceEventType::kReadDone, result);
  // Queued, answered when the scope ends, after the locks: so the read's state can be kept now.
  WakeScope::current().answer(std::move(read->completion), result, bytes_of(read->bwr));
  read->reset();  // before the lock: the read is this call's alone
  sync::LockGuard guard(inner_lock_);
  // binder_ioctl_write_read: work left on the proc queue goes to another waiting thread.
  if (!todo_.empty()) wakeup_proc();
  assume_locked(thread);
  thread.need_return = false;
  if (!thread.spare_read) thread.spare_read = std::move(read);
}

std::unique_ptr<PendingRead> Proc::new_read(Thread& thread) {
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    if (thread.spare_read) return std::move(thread.spare_read);
  }
  return std::make_unique<PendingRead>();
}

std::unique_ptr<PendingRead> Proc::unpark(Thread& thread) {
  assume_locked(thread);
  if (!thread.parked) return nullptr;
  thread.looper &= ~kLooperWaiting;
  if (thread.waiting_hook.is_linked()) thread.waiting_hook.unlink();
  return std::move(thread.parked);
}

void Proc::interrupt(pid_t tid) {
  WakeScope scope(tid);
  if (interrupt_freeze(tid)) return;
  std::shared_ptr<Thread> thread;
  std::unique_ptr<PendingRead> read;
  {
    sync::LockGuard guard(inner_lock_);
    auto it = threads_.find(tid);
    if (it == threads_.end()) return;
    thread = it->second;
    assume_locked(*thread);
    if (!thread->parked || !thread->parked->completion->interrupted()) return;
    read = unpark(*thread);
  }
  finish_read(*thread, std::move(read), -EINTR);  // S1.12
}

unsigned Proc::poll(pid_t tid, std::unique_ptr<PollWaiter> waiter) {
  auto thread = get_thread(tid);
  if (!thread) return kPollErr;
  sync::LockGuard guard(inner_lock_);
  assume_locked(*thread);
  thread->looper |= kLooperPoll;
  if (waiter) thread->poll_waiter = std::move(waiter);
  return has_work(*thread, thread->available_for_proc_work()) ? kPollIn : 0;
}

void Proc::flush() {
  WakeScope scope(pid_);
  sync::LockGuard guard(inner_lock_);
  for (auto& [tid, thread] : threads_) {
    assume_locked(*thread);
    thread->need_return = true;  // S1.8
    if (thread->parked) wake_thread(*thread);
  }
}

}  // namespace cused::core
