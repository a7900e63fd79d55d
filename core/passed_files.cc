// SPDX-License-Identifier: GPL-2.0-only
// Files in transactions (S5.3, S5.4, S5.6, S5.8), the rules of binder_translate_fd,
// binder_apply_fd_fixups and binder_deferred_fd_close. The sender's file is taken in the sender's
// request and held in the target buffer's record (BufferState::files, inner lock of the target)
// until the read that delivers it installs it in the reader's request; FDA fds are closed by the
// request that frees the buffer. Every CallerFiles call is made with no engine lock held.
#include "core/passed_files.h"

#include <cerrno>
#include <cstring>

#include "core/proc.h"
#include "core/trace_events.h"

namespace cused::core {

// binder_translate_fd: the target must accept fds (-EPERM), the fd must be open in the sender
// (-EBADF); then its file is held until delivery. cused adds one rule: both ends need a frontend
// that reaches their file table (not FUSE or CUSE), else -EPERM as for a target that does not
// accept fds.
int Proc::take_file(std::uint32_t fd, binder_size_t offset, bool in_array, const FdRules& rules,
                    BufferState& state) {
  if (!rules.target_accepts) return -EPERM;
  if (!rules.sender || !rules.target_receives) return -EPERM;
  int error = -EBADF;
  std::unique_ptr<PassedFile> file = rules.sender->take(static_cast<int>(fd), error);
  if (!file) return error < 0 ? error : -EBADF;
  trace::emit(TraceEventType::kFdSend, rules.txn_id, static_cast<int>(fd), offset);
  state.files.push_back({std::move(file), offset, in_array});
  return 0;
}

// binder_apply_fd_fixups, in the reader's request: every held file gets a new fd in the reading
// process (the frontend picks the lowest free one, O_CLOEXEC), and that number goes into the
// buffer. The held references are dropped once installed (the fd holds the file now). Returns 0,
// or the failed install's -errno with the fds installed so far closed again: the kernel reserves
// every fd before it installs any, so none is ever visible; cused installs one at a time, and a
// frontend that cannot close another process's fd (-ENOSYS) leaves those open (docs/protocol.md).
int Proc::install_files(PendingRead& read, alloc::Buffer& buffer) {
  std::vector<FileFixup> files = take_pending_files(buffer);
  if (files.empty()) return 0;
  CallerFiles* reader = read.completion->caller_files();
  std::byte* contents = alloc_->contents(buffer).data();
  std::vector<int> installed;
  std::vector<int> array_fds;
  installed.reserve(files.size());
  for (const FileFixup& fixup : files) {
    // A reader without a file table cannot take fds: senders are refused fds for procs that
    // never had one (take_file), so only a proc served by two kinds of frontend gets here.
    const int fd = reader ? reader->install(*fixup.file) : -EPERM;
    if (fd < 0) {
      close_fds(reader, installed);
      return fd;
    }
    installed.push_back(fd);
    trace::emit(TraceEventType::kFdRecv, buffer.debug_id(), fd, fixup.offset);
    const auto number = static_cast<std::uint32_t>(fd);
    std::memcpy(contents + fixup.offset, &number, sizeof number);
    if (fixup.in_array) array_fds.push_back(fd);
  }
  keep_array_fds(buffer, std::move(array_fds));
  return 0;
}

std::vector<FileFixup> Proc::take_pending_files(const alloc::Buffer& buffer) {
  sync::LockGuard guard(inner_lock_);
  BufferState* state = buffer_state(buffer);
  return state ? std::move(state->files) : std::vector<FileFixup>{};
}

void Proc::keep_array_fds(const alloc::Buffer& buffer, std::vector<int> fds) {
  if (fds.empty()) return;
  sync::LockGuard guard(inner_lock_);
  if (BufferState* state = buffer_state(buffer)) state->array_fds = std::move(fds);
}

// S5.4 / S5.8: freeing a delivered buffer closes the fds installed for its FDA objects, in the
// freeing caller (binder_deferred_fd_close), and makes the freeing thread's read return before it
// waits, as the kernel does so that the deferred close runs. Without a file table, or when the
// frontend answers -ENOSYS, the fds stay open in the receiver (docs/protocol.md).
void Proc::close_array_fds(Thread* thread, const std::vector<int>& fds, CallerFiles* closer) {
  if (fds.empty()) return;
  close_fds(closer, fds);
  if (!thread) return;
  sync::LockGuard guard(inner_lock_);
  assume_locked(*thread);
  thread->need_return = true;
}

void Proc::close_fds(CallerFiles* files, const std::vector<int>& fds) {
  if (!files) return;
  for (int fd : fds) files->close(fd);  // the answer changes nothing: see close_array_fds
}

}  // namespace cused::core
