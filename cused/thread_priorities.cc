// SPDX-License-Identifier: GPL-2.0-only
#include "cused/thread_priorities.h"

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <string>

#include "cused/host/task_priority.h"
#include "cused/proc_status.h"

namespace cused {
namespace {

static_assert(core::kSchedOther == SCHED_OTHER && core::kSchedFifo == SCHED_FIFO &&
                  core::kSchedRr == SCHED_RR && core::kSchedBatch == SCHED_BATCH,
              "core's policy numbers are the kernel's");

constexpr int kCapSysNice = 23;  // linux/capability.h

bool has_cap_sys_nice(pid_t tid) {
  std::uint64_t effective = 0;
  read_proc_status(tid, [&](std::string_view name, std::string_view value) {
    if (name == "CapEff") std::from_chars(value.data(), value.data() + value.size(), effective, 16);
  });
  return effective & (std::uint64_t{1} << kCapSysNice);
}

}  // namespace

std::optional<int> HostThreadPriorities::nice(pid_t tid) { return host::read_task_nice(tid); }

core::NicePermission HostThreadPriorities::permission(pid_t tid) {
  core::NicePermission permission;
  permission.cap_sys_nice = has_cap_sys_nice(tid);
  rlimit limit{};
  if (prlimit(tid, RLIMIT_NICE, nullptr, &limit) == 0) permission.rlimit_nice = limit.rlim_cur;
  if (prlimit(tid, RLIMIT_RTPRIO, nullptr, &limit) == 0) permission.rlimit_rtprio = limit.rlim_cur;
  return permission;
}

std::optional<core::SchedPriority> HostThreadPriorities::scheduling(pid_t tid) {
  return host::read_task_priority(tid);
}

void HostThreadPriorities::set_scheduling(pid_t tid, core::SchedPriority priority) {
  // As binder_do_set_priority: the policy only when it changes or is real time, reset on fork so
  // that a thread the serving thread starts does not inherit a borrowed priority.
  const int current = sched_getscheduler(tid);
  if (current < 0) return;  // the thread is gone
  if ((current & ~SCHED_RESET_ON_FORK) != priority.policy || core::is_rt_policy(priority.policy)) {
    sched_param param{};
    if (core::is_rt_policy(priority.policy))
      param.sched_priority = core::to_userspace_prio(priority.policy, priority.prio);
    // EINVAL for a real-time priority out of 1..99 (a node's bad minimum): nothing changes, as
    // in the kernel.
    sched_setscheduler(tid, priority.policy | SCHED_RESET_ON_FORK, &param);
  }
  if (core::is_fair_policy(priority.policy)) core::ThreadPriorities::set_scheduling(tid, priority);
}

void HostThreadPriorities::set_nice(pid_t tid, int nice) {
  // A thread that has gone (ESRCH) needs no priority; nothing else can fail for root.
  setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice);
}

}  // namespace cused
