// SPDX-License-Identifier: GPL-2.0-only
// The write half of BINDER_WRITE_READ: the BC_ command loop (S3.1, binder_thread_write) and the
// commands that are not transactions or death notifications.
#include <algorithm>
#include <cerrno>

#include "core/prefetched_memory.h"
#include "core/proc.h"
#include "core/user_reader.h"

namespace cused::core {

ReadAheadHint Proc::read_ahead_hint(pid_t tid) const {
  sync::LockGuard guard(inner_lock_);
  auto it = threads_.find(tid);
  if (it == threads_.end()) return {};
  const Thread& thread = *it->second;
  assume_locked(thread);
  ReadAheadHint hint;
  hint.payload = thread.payload_hint;
  if (thread.last_write_size == 0) return hint;
  // Commands of another size than last time are still inside the guess, up to the page's end.
  const std::uint64_t page = alloc_->page_size();
  const std::uint64_t to_page_end = page - thread.last_write_buffer % page;
  hint.write_buffer = thread.last_write_buffer;
  hint.write_len =
      std::min<std::uint64_t>(UserReader::kWindow, std::max(thread.last_write_size, to_page_end));
  return hint;
}

// Stops at the first hard error with write_consumed at the failed command, and without an error
// as soon as the thread has a return error to report (a failed transaction, S3.1).
int Proc::write_commands(Thread& thread, UserMemory& caller, std::span<const UserRange> read_ahead,
                         CallerFiles* files, binder_write_read& bwr, uid_t caller_euid) {
  const std::uint64_t start = bwr.write_buffer;
  PrefetchedMemory memory(caller);
  for (const UserRange& copy : read_ahead) memory.hold(copy.addr, copy.dst, copy.len);
  PayloadHint hint;
  {
    sync::LockGuard guard(inner_lock_);
    assume_locked(thread);
    // A frontend that read ahead (cused run) has guessed the payload already: its copies are
    // held in `memory`, and a guess that faulted is not worth another try.
    if (read_ahead.empty()) hint = thread.payload_hint;
    thread.last_write_buffer = start;
    thread.last_write_size = bwr.write_size;
  }
  UserReader reader(memory, start + bwr.write_consumed, start + bwr.write_size, hint);
  while (!reader.at_end() && !return_error_pending(thread)) {
    std::uint32_t cmd = 0;
    if (reader.read(cmd)) return -EFAULT;
    count_command(cmd);
    if (int ret = run_command(thread, cmd, reader, files, caller_euid)) return ret;
    bwr.write_consumed = reader.position() - start;
  }
  return 0;
}

bool Proc::return_error_pending(Thread& thread) {
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  return thread.return_error_cmd != BR_OK;
}

int Proc::run_command(Thread& thread, std::uint32_t cmd, UserReader& reader, CallerFiles* files,
                      uid_t caller_euid) {
  switch (cmd) {
    case BC_INCREFS:
    case BC_ACQUIRE:
    case BC_RELEASE:
    case BC_DECREFS: {
      std::uint32_t target = 0;
      if (reader.read(target)) return -EFAULT;
      return change_ref_count(cmd, target);
    }
    case BC_INCREFS_DONE:
    case BC_ACQUIRE_DONE: {
      binder_ptr_cookie ptr_cookie{};
      if (reader.read(ptr_cookie)) return -EFAULT;
      ref_done(cmd, ptr_cookie);
      return 0;
    }
    case BC_ATTEMPT_ACQUIRE:
    case BC_ACQUIRE_RESULT:
      return -EINVAL;  // never supported
    case BC_FREE_BUFFER: {
      binder_uintptr_t address = 0;
      if (reader.read(address)) return -EFAULT;
      free_buffer_command(thread, address, files);
      return 0;
    }
    case BC_TRANSACTION_SG:
    case BC_REPLY_SG: {
      binder_transaction_data_sg tr{};
      if (reader.read(tr)) return -EFAULT;
      transact(thread, reader.memory(), files, tr.transaction_data, cmd == BC_REPLY_SG,
               tr.buffers_size, caller_euid);
      return 0;
    }
    case BC_TRANSACTION:
    case BC_REPLY: {
      binder_transaction_data tr{};
      if (reader.read(tr)) return -EFAULT;
      transact(thread, reader.memory(), files, tr, cmd == BC_REPLY, 0, caller_euid);
      return 0;
    }
    case BC_REGISTER_LOOPER:
      register_looper(thread);
      return 0;
    case BC_ENTER_LOOPER:
      enter_looper(thread);
      return 0;
    case BC_EXIT_LOOPER:
      exit_looper(thread);
      return 0;
    case BC_REQUEST_DEATH_NOTIFICATION:
    case BC_CLEAR_DEATH_NOTIFICATION: {
      binder_handle_cookie hc{};
      if (reader.read(hc)) return -EFAULT;
      if (cmd == BC_REQUEST_DEATH_NOTIFICATION)
        request_death_notification(thread, hc);
      else
        clear_death_notification(thread, hc);
      return 0;
    }
    case BC_DEAD_BINDER_DONE: {
      binder_uintptr_t cookie = 0;
      if (reader.read(cookie)) return -EFAULT;
      dead_binder_done(thread, cookie);
      return 0;
    }
    case uapi::BC_REQUEST_FREEZE_NOTIFICATION:
    case uapi::BC_CLEAR_FREEZE_NOTIFICATION: {
      binder_handle_cookie hc{};
      if (reader.read(hc)) return -EFAULT;
      // S7.6 / S7.9: unlike death notifications, mistakes here are hard errors.
      return cmd == uapi::BC_REQUEST_FREEZE_NOTIFICATION ? request_freeze_notification(hc)
                                                         : clear_freeze_notification(hc);
    }
    case uapi::BC_FREEZE_NOTIFICATION_DONE: {
      binder_uintptr_t cookie = 0;
      if (reader.read(cookie)) return -EFAULT;
      return freeze_notification_done(cookie);
    }
    default:
      return -EINVAL;
  }
}

// BC_INCREFS / BC_ACQUIRE / BC_RELEASE / BC_DECREFS (S6.3, S6.4). Everything but the context
// manager taking a ref on its own node through handle 0 is a soft error.
int Proc::change_ref_count(std::uint32_t cmd, std::uint32_t target) {
  const bool strong = cmd == BC_ACQUIRE || cmd == BC_RELEASE;
  const bool increment = cmd == BC_INCREFS || cmd == BC_ACQUIRE;
  if (increment && target == 0) {
    sync::LockGuard guard(context_.lock);
    if (auto& manager = context_.manager) {
      if (node_owner(*manager).get() == this) return -EINVAL;  // S11.4
      RefData ref;
      if (inc_ref_for_node(*manager, strong, nullptr, ref) == 0) return 0;
    }
  }
  std::uint32_t desc = target;
  update_ref_for_handle(target, increment, strong, &desc);
  return 0;
}

std::shared_ptr<Proc> Proc::node_owner(const Node& node) {
  sync::LockGuard guard(node.lock);
  return node.proc;
}

// BC_INCREFS_DONE / BC_ACQUIRE_DONE (S6.6): userspace took the reference BR_INCREFS/BR_ACQUIRE
// asked for; the driver drops the one it held meanwhile.
void Proc::ref_done(std::uint32_t cmd, const binder_ptr_cookie& ptr_cookie) {
  NodeTmpRef node = get_node(ptr_cookie.ptr);
  if (!node || node->cookie != ptr_cookie.cookie) return;  // "no match" / "cookie mismatch"
  const bool strong = cmd == BC_ACQUIRE_DONE;
  std::shared_ptr<Node> freed;
  NodeInnerGuard guard(*node);
  bool& pending = strong ? node->pending_strong_ref : node->pending_weak_ref;
  if (!pending) return;  // "no pending request"
  pending = false;
  freed = dec_node_nilocked(*node, strong, false);
}

// S8.2: a pool thread answering BR_SPAWN_LOOPER.
void Proc::register_looper(Thread& thread) {
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  if (thread.looper & kLooperEntered) {
    thread.looper |= kLooperInvalid;
  } else if (requested_threads_ == 0) {
    thread.looper |= kLooperInvalid;
  } else {
    requested_threads_--;
    requested_threads_started_++;
  }
  thread.looper |= kLooperRegistered;
}

// S8.3: an application looper; not counted against max_threads.
void Proc::enter_looper(Thread& thread) {
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  if (thread.looper & kLooperRegistered) thread.looper |= kLooperInvalid;
  thread.looper |= kLooperEntered;
}

// S8.4
void Proc::exit_looper(Thread& thread) {
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  thread.looper |= kLooperExited;
}

// BC_FREE_BUFFER (S9.9): only the exact start of a buffer a read handed out, and only once. The
// FDA fds of the buffer are closed in the freeing caller's file table (S5.8).
void Proc::free_buffer_command(Thread& thread, binder_uintptr_t address, CallerFiles* files) {
  alloc::FreeLookup lookup = alloc_->prepare_to_free(address);
  if (!lookup) return;  // "no match" or "unreturned or currently freeing": soft errors
  free_buffer(&thread, *lookup.buffer, files);
}

}  // namespace cused::core
