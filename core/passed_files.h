// SPDX-License-Identifier: GPL-2.0-only
// Files that travel in transactions (BINDER_TYPE_FD and BINDER_TYPE_FDA; S5.3, S5.4, S5.6). core
// never opens, dups or closes a file itself: the frontend that serves the caller's ioctl reaches
// the caller's file table through CallerFiles, and a sender's file is held as a PassedFile from
// the send until the receiver's read installs it (or the transaction fails).
#pragma once

#include <memory>

namespace cused::core {

// A sender's open file held by the driver (the kernel's struct file *, taken by fget in
// binder_translate_fd). Destroying it drops that reference (fput).
class PassedFile {
 public:
  virtual ~PassedFile() = default;
};

// The file table of the process whose ioctl is being served, for frontends that can reach it
// (`cused run`: pidfd_getfd and SECCOMP_IOCTL_NOTIF_ADDFD). FUSE and CUSE cannot: their
// completions have none (Completion::caller_files() is null), and a proc served through them can
// neither send nor receive fds (EPERM, docs/binderfs.md).
class CallerFiles {
 public:
  virtual ~CallerFiles() = default;
  // fget(fd) in the caller: its open file, or null with `error` set to -EBADF (or another -errno).
  virtual std::unique_ptr<PassedFile> take(int fd, int& error) = 0;
  // get_unused_fd_flags(O_CLOEXEC) and fd_install in the caller (binder_apply_fd_fixups): the
  // new fd, or -errno (-EMFILE).
  virtual int install(const PassedFile& file) = 0;
  // close(fd) in the caller (binder_deferred_fd_close: FDA fds at BC_FREE_BUFFER, fds of a
  // fixup that failed part way): 0, or -errno; -ENOSYS when the frontend cannot close a
  // descriptor of another process.
  virtual int close(int fd) = 0;
};

}  // namespace cused::core
