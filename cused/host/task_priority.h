// SPDX-License-Identifier: GPL-2.0-only
// A thread's scheduling as the kernel's task holds it (core::SchedPriority: policy and prio), read
// by tid: for S4.12's host (cused/thread_priorities.h) and for the prio fields of the trace's
// cused_lock_* events (trace_recorder.h, usdt_feed.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>

#include "core/thread_priority.h"
#include "core/trace_events.h"

namespace cused::host {

// task_nice of thread `tid`; nullopt when the thread is gone.
std::optional<int> read_task_nice(pid_t tid);
// The policy and normal_prio of thread `tid`; nullopt when the thread is gone.
std::optional<core::SchedPriority> read_task_priority(pid_t tid);

// What the trace's cused_lock_* fields ask of a host sink (core::TraceSink), for both of the
// host's sinks (the trace recorder, the USDT feed's):
//  - task_prio: the prio of `tid`, -1 when it is gone, read at most once per kPrioStaleAfter per
//    daemon thread, so that a task that changes its nice or policy is followed within that bound;
//  - involuntary_switches: the calling thread's, getrusage's ru_nivcsw.
inline constexpr std::chrono::milliseconds kPrioStaleAfter{10};
class TaskStateSink : public core::TraceSink {
 public:
  int task_prio(pid_t tid) override;
  std::uint64_t involuntary_switches() override;

 protected:
  ~TaskStateSink() = default;
};

}  // namespace cused::host
