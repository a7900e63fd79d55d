// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/caller_files.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "cused/run/held_file.h"

namespace cused::run {

std::unique_ptr<core::PassedFile> CallerFiles::take(int fd, int& error) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, tgid_, 0));
  if (pidfd < 0) {
    error = -EBADF;  // the sender is going away
    return nullptr;
  }
  // The pidfd names the process the notification came from only while the notification waits:
  // a pid can be reused once its process is gone.
  int copy =
      session_->listener.valid(id_) ? static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0)) : -1;
  int taken_errno = errno;
  ::close(pidfd);
  if (copy < 0) {
    error = taken_errno == EBADF || taken_errno == ENOENT ? -EBADF : -taken_errno;
    return nullptr;
  }
  return std::make_unique<HeldFile>(copy);
}

int CallerFiles::install(const core::PassedFile& file) {
  return session_->listener.add_fd(id_, static_cast<const HeldFile&>(file).fd(), O_CLOEXEC);
}

int CallerFiles::close(int) { return -ENOSYS; }

}  // namespace cused::run
