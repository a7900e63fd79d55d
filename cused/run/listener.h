// SPDX-License-Identifier: GPL-2.0-only
// One program's seccomp listener, as the daemon serves it (SECCOMP_IOCTL_NOTIF_*): notifications
// in, answers out, and the fds the daemon installs in the notified process. Thread-safe: the
// kernel serializes the listener's ioctls; answers come from whichever daemon thread completes
// a request.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace cused::run {

class Listener {
 public:
  // Takes ownership of `fd`.
  explicit Listener(int fd) : fd_(fd) {}
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  int fd() const { return fd_; }
  // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux >= 6.6): the program's notification wakes a
  // receiving thread synchronously (the scheduler's WF_SYNC: the program blocks right after, so
  // the receiver may run on its CPU), and so does the answer the program waits for. False when
  // the kernel does not know the flag.
  bool wake_synchronously() const;
  // Closes the listener for the kernel (its pending and later notified calls fail with ENOSYS)
  // while the descriptor number stays taken (by /dev/null), so a late answer from a completion
  // can never reach another file that reused the number.
  void close_for_programs() const;
  // The next notification; nullopt when none was pending (its task went away meanwhile) or the
  // listener failed (errno says which: ENOENT, or another).
  std::optional<seccomp_notif> receive() const;
  // The system call returns `result` (>= 0) or fails with -`result` (< 0). 0, or -errno:
  // -ENOENT when the notification is gone (its task was killed).
  int answer(std::uint64_t id, long result) const;
  // The system call runs in the kernel as if there were no filter.
  int continue_syscall(std::uint64_t id) const;
  // Whether the notification is still waiting for its answer: its task is alive and waiting.
  bool valid(std::uint64_t id) const;
  // Installs a dup of `fd` in the notified process (flags: O_CLOEXEC or 0); its number there, or
  // -errno (-EMFILE when its table is full).
  int add_fd(std::uint64_t id, int fd, unsigned flags) const;

 private:
  const int fd_;
};

}  // namespace cused::run
