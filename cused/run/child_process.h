// SPDX-License-Identifier: GPL-2.0-only
// A child process of `cused run` (the program, its servicemanager, its daemon) held by a pidfd,
// so that the launcher can wait for any of them and for its stop signals in one poll, and can
// never signal a recycled pid.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>

namespace cused::run {

class ChildProcess {
 public:
  // Takes the child `pid` (not yet reaped). Throws std::system_error if no pidfd can be had.
  explicit ChildProcess(pid_t pid);
  // A child still running is killed (SIGKILL) and reaped.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Readable (POLLIN) once the child has exited.
  int pidfd() const { return pidfd_; }
  // Its wait status once it has exited (reaped here), nullopt while it runs.
  std::optional<int> status();
  void signal(int signal) const;
  // Sends `signal`, waits up to `limit` for the exit, then SIGKILL; the wait status.
  int stop(int signal, std::chrono::milliseconds limit);

 private:
  pid_t pid_;
  int pidfd_ = -1;
  std::optional<int> status_;
};

}  // namespace cused::run
