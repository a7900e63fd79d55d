// SPDX-License-Identifier: GPL-2.0-only
// The host side of S4.12 (core/thread_priority.h): a client thread's nice read and set by tid,
// as binder_set_nice sets `current`'s. The daemon is root, so it can set any nice; core applies
// can_nice()'s rule for the opener first (the permission read here). Under priority=android also
// the thread's policy: SCHED_FIFO / SCHED_RR / SCHED_OTHER.
#pragma once

#include "core/thread_priority.h"

namespace cused {

class HostThreadPriorities final : public core::ThreadPriorities {
 public:
  std::optional<int> nice(pid_t tid) override;
  // CAP_SYS_NICE from the thread's effective set (/proc/<tid>/status CapEff), RLIMIT_NICE from
  // prlimit.
  core::NicePermission permission(pid_t tid) override;
  void set_nice(pid_t tid, int nice) override;
  // priority=android: sched_getscheduler / sched_getparam, and sched_setscheduler on the real
  // tid (core has applied can_nice's rules, RLIMIT_RTPRIO among them).
  std::optional<core::SchedPriority> scheduling(pid_t tid) override;
  void set_scheduling(pid_t tid, core::SchedPriority priority) override;
};

}  // namespace cused
