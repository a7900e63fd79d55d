// SPDX-License-Identifier: GPL-2.0-only
// One binder thread (binder_thread): a caller tid inside a proc, with its looper state, its own
// work queue, its transaction stack and its error slots. Every mutable field is guarded by the
// owning proc's inner lock, which the thread names `inner_lock`.
#pragma once

#include <sys/types.h>

#include <boost/container/small_vector.hpp>
#include <boost/intrusive/list.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/completion.h"
#include "core/locks.h"
#include "core/stats.h"
#include "core/thread_priority.h"
#include "core/user_memory.h"
#include "core/work.h"
#include "uapi/binder.h"

namespace cused::core {

class Proc;
class Thread;
class Transaction;

// S8.1 looper flags, as shown in the debug logs.
enum LooperState : std::uint32_t {
  kLooperRegistered = 0x01,
  kLooperEntered = 0x02,
  kLooperExited = 0x04,
  kLooperInvalid = 0x08,
  kLooperWaiting = 0x10,
  kLooperPoll = 0x20,
};

// A thread's error slot as a work item (binder_error): return_error for failures of its own
// commands, reply_error for the failure of the reply it waits for.
class ErrorWork final : public Work {
 public:
  ErrorWork(Thread& thread, bool reply_slot)
      : Work(WorkType::kReturnError), thread(thread), reply_slot(reply_slot) {}
  Thread& thread;
  const bool reply_slot;

 protected:
  std::shared_ptr<void> owner() override;
};

// The read half of one BINDER_WRITE_READ that is running or parked (binder_thread_read's state
// across its wait). The completion is the caller's request; `bwr` is copied back when it ends.
// What the read produces is gathered in `out` and written to the caller's read buffer in one go
// before anything depends on it (a delivered transaction, the end of the read).
struct PendingRead {
  std::unique_ptr<Completion> completion;
  binder_write_read bwr{};
  bool nonblock = false;
  std::uint64_t pos = 0;        // offset in the read buffer of the next byte produced
  std::uint64_t out_start = 0;  // offset in the read buffer of out[0]
  // Run again by a wake-up rather than from the top of binder_thread_read (or its retry): the
  // wait it comes back from was traced when it began.
  bool resumed = false;
  boost::container::small_vector<std::byte, 160> out;

  std::uint64_t space_left() const { return bwr.read_size > pos ? bwr.read_size - pos : 0; }
  void put(const void* data, std::size_t len);
  template <typename T>
  void put(const T& value) {
    put(&value, sizeof value);
  }
  // Writes `out` to the caller. Returns 0 or -EFAULT.
  int flush();
  // Back to a new read's state, keeping out's capacity.
  void reset();
};

using WaitingHook =
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>;

class Thread : public std::enable_shared_from_this<Thread> {
 public:
  Thread(std::shared_ptr<Proc> proc, InnerLock& inner_lock, pid_t tid);
  ~Thread();

  const std::shared_ptr<Proc> proc;
  InnerLock& inner_lock;  // proc->inner_lock_
  const pid_t tid;

  std::uint32_t looper CUSED_GUARDED_BY(inner_lock) = 0;
  // S2.0 / S8.6: set for a new thread and by flush; reads never block while it is set.
  bool need_return CUSED_GUARDED_BY(inner_lock) = true;
  // The todo list holds work that should wake the thread (not only deferred completions).
  bool process_todo CUSED_GUARDED_BY(inner_lock) = false;
  bool is_dead CUSED_GUARDED_BY(inner_lock) = false;
  WorkList todo CUSED_GUARDED_BY(inner_lock);
  std::shared_ptr<Transaction> transaction_stack CUSED_GUARDED_BY(inner_lock);

  ErrorWork return_error{*this, false};
  ErrorWork reply_error{*this, true};
  std::uint32_t return_error_cmd CUSED_GUARDED_BY(inner_lock) = BR_OK;
  std::uint32_t reply_error_cmd CUSED_GUARDED_BY(inner_lock) = BR_OK;
  binder_extended_error ee CUSED_GUARDED_BY(inner_lock){0, BR_OK, 0};
  // Where this thread's last transaction payload was, read ahead with its next commands.
  PayloadHint payload_hint CUSED_GUARDED_BY(inner_lock);
  // Where this thread's last non-empty write buffer was (Proc::read_ahead_hint).
  std::uint64_t last_write_buffer CUSED_GUARDED_BY(inner_lock) = 0;
  std::uint64_t last_write_size CUSED_GUARDED_BY(inner_lock) = 0;

  // On the proc's waiting-threads list (blocked waiting for proc work, most recent first).
  WaitingHook waiting_hook;
  std::unique_ptr<PendingRead> parked CUSED_GUARDED_BY(inner_lock);
  // The last finished read's state, emptied, for the next one (Proc::new_read): a tid makes one
  // request at a time, so one kept is all a read needs not to allocate.
  std::unique_ptr<PendingRead> spare_read CUSED_GUARDED_BY(inner_lock);
  std::shared_ptr<PollWaiter> poll_waiter CUSED_GUARDED_BY(inner_lock);
  ObjCounter counter;  // S10.6 `stats`: thread

  // priority=android, binder_thread's prio_state: a reply to a nested call marks the restore it
  // is about to do as pending; a nested call that reaches this thread meanwhile saves the
  // pending priority as the one to restore after it and aborts that restore.
  enum class PrioState : std::uint8_t { kSet, kPending, kAbort };
  sync::Mutex prio_lock;  // after the proc's inner lock; the host's syscall runs under it
  PrioState prio_state CUSED_GUARDED_BY(prio_lock) = PrioState::kSet;
  SchedPriority prio_next CUSED_GUARDED_BY(prio_lock);

  std::uint32_t& error_cmd(const ErrorWork& slot) CUSED_REQUIRES(inner_lock) {
    return slot.reply_slot ? reply_error_cmd : return_error_cmd;
  }
  bool is_looper() const CUSED_REQUIRES(inner_lock) {
    return looper & (kLooperRegistered | kLooperEntered);
  }
  // binder_available_for_proc_work_ilocked. A todo holding only deferred work (a completion kept
  // back by TF_DEFER_COMPLETE) counts as empty, so the replier goes on to wait for proc work; the
  // kernel never has such a queue without a transaction stack.
  bool available_for_proc_work() const CUSED_REQUIRES(inner_lock) {
    return !transaction_stack && (todo.empty() || !process_todo);
  }
  // binder_enqueue_thread_work_ilocked / _deferred_.
  void enqueue_work(Work& work) CUSED_REQUIRES(inner_lock);
  void enqueue_deferred_work(Work& work) CUSED_REQUIRES(inner_lock);
};

}  // namespace cused::core
