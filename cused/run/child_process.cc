// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/child_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace cused::run {

ChildProcess::ChildProcess(pid_t pid)
    : pid_(pid), pidfd_(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))) {
  if (pidfd_ < 0) {
    int error = errno;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    throw std::system_error(error, std::generic_category(), "pidfd_open");
  }
}

ChildProcess::~ChildProcess() {
  if (!status()) stop(SIGKILL, std::chrono::milliseconds(-1));
  close(pidfd_);
}

std::optional<int> ChildProcess::status() {
  if (status_) return status_;
  int wait_status = 0;
  pid_t result;
  while ((result = waitpid(pid_, &wait_status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (result == pid_) status_ = wait_status;
  return status_;
}

void ChildProcess::signal(int signal) const {
  if (!status_) syscall(SYS_pidfd_send_signal, pidfd_, signal, nullptr, 0);
}

int ChildProcess::stop(int signal, std::chrono::milliseconds limit) {
  if (auto done = status()) return *done;
  this->signal(signal);
  pollfd exited{pidfd_, POLLIN, 0};
  while (poll(&exited, 1, static_cast<int>(limit.count())) < 0 && errno == EINTR) {
  }
  if (auto done = status()) return *done;
  this->signal(SIGKILL);
  int wait_status = 0;
  while (waitpid(pid_, &wait_status, 0) < 0 && errno == EINTR) {
  }
  status_ = wait_status;
  return wait_status;
}

}  // namespace cused::run
