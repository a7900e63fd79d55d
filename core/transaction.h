// SPDX-License-Identifier: GPL-2.0-only
// One transaction or reply in flight (binder_transaction), and the engine's record of a buffer it
// filled in the target proc (the driver half of binder_buffer).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/locks.h"
#include "core/passed_files.h"
#include "core/stats.h"
#include "core/thread_priority.h"
#include "core/work.h"
#include "uapi/binder.h"

namespace cused::core {

namespace alloc {
class Buffer;
}

class Node;
class Proc;
class Thread;
class Transaction;

// What releasing a delivered buffer must undo for one translated object (S5.8). Kept in daemon
// memory: the engine never trusts what a client could have changed in its mapping.
struct ObjectRecord {
  enum class Kind : std::uint8_t { kNode, kHandle };
  Kind kind;
  bool strong;
  std::uint32_t handle;        // kHandle: the receiver's desc
  std::shared_ptr<Node> node;  // kNode: the receiver's own node
};

// A sender's file on its way to the target (binder_txn_fd_fixup, S5.3/S5.4): held from the send
// until the reader installs it, then its fd number goes to `offset` in the buffer (an FD object's
// fd field, or one u32 slot of an FDA's array in its parent's copy).
struct FileFixup {
  std::unique_ptr<PassedFile> file;
  binder_size_t offset;
  bool in_array;  // FDA: the driver closes the installed fd at BC_FREE_BUFFER (S5.4)
};

// The engine's state of one allocated buffer in its owner proc. Kept in the owner's
// buffer_states_, so every field is guarded by that proc's inner lock (a plan's own copy, before
// it is filed there, belongs to the one request building it).
struct BufferState {
  // Null for replies. Holds the local strong reference of S4.1/S6.7 until the buffer is freed.
  std::shared_ptr<Node> target_node;
  std::vector<ObjectRecord> objects;
  // binder_buffer.transaction: the transaction still using the buffer.
  std::weak_ptr<Transaction> transaction;
  // The transaction's files not installed yet (the kernel's t->fd_fixups): moved out by the read
  // that delivers it; dropped with the record, never installed, if it goes undelivered.
  std::vector<FileFixup> files;
  // The fds installed in the receiver for FDA objects, which BC_FREE_BUFFER closes (S5.8).
  std::vector<int> array_fds;
};

// BR_TRANSACTION_COMPLETE and its variants for the sender (binder_work "tcomplete").
class CompleteWork final : public Work, public std::enable_shared_from_this<CompleteWork> {
 public:
  CompleteWork() : Work(WorkType::kTransactionComplete) {}
  ObjCounter counter;  // S10.6 `stats`: transaction_complete

 protected:
  std::shared_ptr<void> owner() override { return shared_from_this(); }
};

class Transaction final : public Work, public std::enable_shared_from_this<Transaction> {
 public:
  struct Params {
    int debug_id;
    pid_t from_pid;
    pid_t from_tid;
    uid_t sender_euid;
    std::uint32_t code;
    std::uint32_t flags;
    bool is_reply;
    int priority;  // the sender's nice (S4.12)
  };
  explicit Transaction(const Params& params);

  const int debug_id;
  const pid_t from_pid;
  const pid_t from_tid;
  const uid_t sender_euid;
  const std::uint32_t code;
  const std::uint32_t flags;
  const bool is_async;
  const bool is_reply;
  const int priority;  // S4.12: the sending thread's nice when it sent
  // S4.12: the receiving thread's nice before the call changed it, restored when it replies.
  // Written by the read that delivers a sync call and read by that thread's reply.
  std::atomic<int> saved_priority{0};
  // priority=android (core/android_priority.cc): what the call asks of its receiver (the sync
  // sender's policy, or the target's default), set before the transaction is published; whether
  // it was sent to a thread waiting for us down our stack (a nested call).
  SchedPriority sched_priority;
  bool is_nested = false;

  // Set before the transaction is published (queued or pushed), never changed afterwards.
  std::shared_ptr<Node> target_node;         // null for replies
  std::shared_ptr<Transaction> from_parent;  // the sender's stack below this call
  binder_uintptr_t security_ctx = 0;         // receiver address of the label (S4.9)
  // Its buffer's record holds files for the reader to install (S5.6): only then does the read
  // look there.
  bool carries_files = false;
  // S10.6: the logs show how long a transaction has been in flight.
  const std::chrono::steady_clock::time_point start_time = std::chrono::steady_clock::now();
  ObjCounter counter;  // S10.6 `stats`: transaction

  mutable TxnLock lock;
  std::shared_ptr<Thread> from CUSED_GUARDED_BY(lock);  // the waiting sender (sync calls)
  std::shared_ptr<Proc> to_proc CUSED_GUARDED_BY(lock);
  std::shared_ptr<Thread> to_thread CUSED_GUARDED_BY(lock);
  std::shared_ptr<Transaction> to_parent CUSED_GUARDED_BY(lock);  // the receiver's stack below
  // The buffer in to_proc; null once the receiver freed it early or the receiver died.
  alloc::Buffer* buffer CUSED_GUARDED_BY(lock) = nullptr;
  // priority=android: applied to a receiving thread once (at queueing to a chosen thread, else
  // when read), and what that thread had before, which its reply restores.
  bool set_priority_called CUSED_GUARDED_BY(lock) = false;
  SchedPriority saved_sched_priority CUSED_GUARDED_BY(lock);

  std::shared_ptr<Thread> get_from() const CUSED_EXCLUDES(lock);
  alloc::Buffer* get_buffer() const CUSED_EXCLUDES(lock);

 protected:
  std::shared_ptr<void> owner() override { return shared_from_this(); }
};

}  // namespace cused::core
