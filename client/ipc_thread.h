// SPDX-License-Identifier: GPL-2.0-only
// libcused-client's per-thread protocol state (libbinder's IPCThreadState, much reduced): the
// BC_ command queue that goes out with the next BINDER_WRITE_READ, the BR_ return buffer, a
// synchronous transact(), and the looper that serves BR_TRANSACTION with a handler and answers
// the driver's reference handshakes. One IpcThread per thread; not shareable.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "client/binder_process.h"
#include "client/parcel.h"

namespace cused::client {

class IpcThread {
 public:
  explicit IpcThread(BinderProcess& process);
  // Flushes what is queued, then BINDER_THREAD_EXIT.
  ~IpcThread();
  IpcThread(const IpcThread&) = delete;
  IpcThread& operator=(const IpcThread&) = delete;

  BinderProcess& process() { return process_; }
  // The IpcThread of the calling thread (the newest one constructed on it), or null: lets a
  // handler make nested calls or leave the looper it runs in.
  static IpcThread* current();

  // Called from a handler: join_looper returns once this transaction is answered.
  void leave_looper() { leaving_ = true; }

  // BC_TRANSACTION to `handle`; waits for BR_REPLY (or, with TF_ONE_WAY, for
  // BR_TRANSACTION_COMPLETE). Returns kOk, the status the target replied with (TF_STATUS_CODE),
  // kDeadObject / kFailedTransaction, or -errno from the ioctl. `reply` (may be null) reads the
  // reply buffer in place until it is destroyed or reset on this thread.
  std::int32_t transact(std::uint32_t handle, std::uint32_t code, const Parcel& data, Parcel* reply,
                        std::uint32_t flags = 0);

  // Reference and death commands, queued for the next ioctl (flush() sends them now).
  void acquire(std::uint32_t handle) { queue_handle_command(BC_ACQUIRE, handle); }
  void release(std::uint32_t handle) { queue_handle_command(BC_RELEASE, handle); }
  void increfs(std::uint32_t handle) { queue_handle_command(BC_INCREFS, handle); }
  void request_death_notification(std::uint32_t handle, binder_uintptr_t cookie);
  void clear_death_notification(std::uint32_t handle, binder_uintptr_t cookie);
  void free_buffer(binder_uintptr_t buffer);
  // Writes the queued commands without waiting for anything. 0 or -errno.
  int flush();

  // Serves transactions until the driver fails the read (or sends BR_FINISHED). The first
  // looper of a pool is entered by the user (BC_ENTER_LOOPER), the driver's spawns register
  // (BC_REGISTER_LOOPER). Returns the error that ended it.
  int join_looper(bool entered_by_user);

 private:
  // One BINDER_WRITE_READ: writes the queue; with `receive`, fills the return buffer.
  int talk(bool receive);
  // The next BR_ code and its payload from the return buffer, reading more when it is empty.
  int next_command(std::uint32_t& cmd, const std::byte*& payload);
  // Everything but the replies transact() waits for. 0, or the error that stops a looper.
  int execute(std::uint32_t cmd, const std::byte* payload);
  void serve(const binder_transaction_data& txn);
  void queue_reply(const Parcel& reply, std::int32_t status);
  int wait_for_transaction_complete();
  void queue_handle_command(std::uint32_t cmd, std::uint32_t handle);
  template <typename T>
  void queue(std::uint32_t cmd, const T& payload);
  void queue(std::uint32_t cmd);

  BinderProcess& process_;
  std::vector<std::byte> out_;
  std::array<std::byte, 256> in_{};  // libbinder's read size
  std::size_t in_size_ = 0;
  std::size_t in_pos_ = 0;
  // A deferred-complete reply's data and status must outlive the ioctl that carries it.
  Parcel pending_reply_;
  std::int32_t pending_status_ = 0;
  // BR_TRANSACTION_COMPLETEs still owed for TF_DEFER_COMPLETE replies: they arrive later, with
  // whatever wakes this thread, and must not be taken for a one-way call's completion.
  std::uint32_t deferred_completes_ = 0;
  bool leaving_ = false;
  IpcThread* previous_current_ = nullptr;
};

}  // namespace cused::client
