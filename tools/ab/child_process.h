// SPDX-License-Identifier: GPL-2.0-only
// A program a block of `binder-ab run` starts for its state (the daemon, a servicemanager, a
// background caller, a CPU hog, the memory cgroup's anonymous program), in a process group of its
// own at a nice level of its own, and ended with its group when the object goes: at the block's
// end, on an exception, or on Ctrl-C (a StopCleanup). One concept: a child that never outlives
// binder-ab.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tools/ab/stop_signals.h"

namespace cused::tools::ab {

struct ChildOptions {
  // Set in the child before it runs anything, so that every thread has it; unset: binder-ab's.
  std::optional<int> nice{};
  bool quiet = false;  // stdout and stderr to /dev/null; else stdout goes to binder-ab's stderr
};

class ChildProcess {
 public:
  // Runs `argv` (argv[0] looked up in PATH). Throws std::system_error if it cannot start.
  ChildProcess(const std::vector<std::string>& argv, ChildOptions options);
  // Runs `body(argument)` in a forked child, which exits when it returns (a CPU hog, a memory
  // toucher: code that makes system calls only, as a fork of a threaded program must).
  ChildProcess(void (*body)(long argument), long argument, ChildOptions options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Whether it still runs; once it has ended, ended_status() has its waitpid status.
  bool running();
  int ended_status() const { return status_; }
  // SIGTERM to its group, SIGKILL after `grace`; then reaped. Idempotent.
  void stop(std::chrono::duration<double> grace = std::chrono::seconds(5));

 private:
  void watch_for_stop_signal();

  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::optional<StopCleanup> on_stop_signal_;
};

}  // namespace cused::tools::ab
