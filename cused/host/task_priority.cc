// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/task_priority.h"

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>

#include "cused/host/recent_by_tid.h"

namespace cused::host {
namespace {

// The prios this daemon thread read lately, by task; -1 is kept for a task that is gone.
thread_local RecentByTid<int> this_thread_prios{kPrioStaleAfter};

}  // namespace

std::optional<int> read_task_nice(pid_t tid) {
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (nice == -1 && errno != 0) return std::nullopt;
  return nice;
}

std::optional<core::SchedPriority> read_task_priority(pid_t tid) {
  const int policy = sched_getscheduler(tid);
  if (policy < 0) return std::nullopt;
  core::SchedPriority priority{policy & ~SCHED_RESET_ON_FORK, 0};
  if (core::is_rt_policy(priority.policy)) {
    sched_param param{};
    if (sched_getparam(tid, &param) != 0) return std::nullopt;
    priority.prio = core::to_kernel_prio(priority.policy, param.sched_priority);
    return priority;
  }
  // SCHED_IDLE and SCHED_DEADLINE are not binder's; their nice stands in for normal_prio.
  auto current = read_task_nice(tid);
  if (!current) return std::nullopt;
  priority.prio = core::to_kernel_prio(SCHED_OTHER, *current);
  return priority;
}

int TaskStateSink::task_prio(pid_t tid) {
  int prio = -1;
  this_thread_prios.get(tid, prio, [](pid_t task, int& out) {
    const auto priority = read_task_priority(task);
    out = priority ? priority->prio : -1;
    return true;
  });
  return prio;
}

std::uint64_t TaskStateSink::involuntary_switches() {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_nivcsw);
}

}  // namespace cused::host
