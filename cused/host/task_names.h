// SPDX-License-Identifier: GPL-2.0-only
// The names ftrace prints for a task: its comm and its thread group, read from /proc. The kernel
// saves a task's comm as it traces it; the daemon reads it the first time it traces the task
// (note()), since a client may be gone by the time its events are written. A task never noted and
// gone when written is printed as the kernel prints one whose comm it did not save, "<...>".
#pragma once

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace cused::host {

class TaskNames {
 public:
  struct Task {
    std::string comm;
    pid_t tgid = 0;  // 0: unknown
  };
  // Reads `tid`'s names unless they were read already. Kept for the whole trace: a trace is a
  // short window, in which a tid is not reused.
  void note(pid_t tid);
  Task of(pid_t tid);
  // The program of each thread group noted so far (tgid: the basename of its argv[0], else its
  // main thread's comm), read with its first thread: the process names of the trace's end lines.
  std::map<pid_t, std::string> programs();
  void clear();

 private:
  const Task& lookup(pid_t tid);

  std::mutex mutex_;
  std::unordered_map<pid_t, Task> cache_;  // guarded by mutex_
  std::map<pid_t, std::string> programs_;  // guarded by mutex_
};

}  // namespace cused::host
