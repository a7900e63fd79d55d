// SPDX-License-Identifier: GPL-2.0-only
// Whose CPU time the driver runs on (issue 18, "execution context"). In the kernel, binder's code
// runs in the calling thread, at its policy and priority: a low-priority caller holding a sleeping
// lock in the driver is preempted by high-priority work, which is what priority-inversion patches
// are about. cused serves every request on a daemon thread; a CallerScheduling scope gives that
// thread the caller's scheduling attributes (policy, nice, real-time priority) while it serves the
// request, and its own back afterwards. The variant key exec_context=daemon turns it off
// (docs/variants.md), for comparison.
//
// While such a thread serves a caller less urgent than the daemon and holds a spinlock
// (core/sync/preemption.h: the spin designs' allocator lock), it runs at SCHED_FIFO priority 1,
// not preemptible by any ordinary thread, as a kernel spinlock's holder runs with preemption
// disabled: from just before it takes the lock until just after it has released it
// (core/alloc/alloc_lock.h); a sleeping lock's holder stays preemptible.
//
// Cost: a caller's attributes are read with sched_getattr and kept per daemon thread for
// kStaleAfter (a caller that changes its nice is followed within that bound); the daemon thread
// changes its own attributes only when the caller's differ from what it runs at, and changes them
// back at the end, two sched_setattr calls (docs/performance.md has the measured cost).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>

#include "core/proc.h"

namespace cused {

struct SchedulingAttributes {
  std::uint32_t policy = 0;  // SCHED_OTHER
  std::int32_t nice = 0;
  std::uint32_t rt_priority = 0;
  bool operator==(const SchedulingAttributes&) const = default;
};

class CallerScheduling {
 public:
  static constexpr std::chrono::milliseconds kStaleAfter{10};

  // With `enabled`, the calling daemon thread runs at `tid`'s attributes until the scope ends.
  // Nothing fails: a caller whose attributes cannot be read (it has gone) or taken (SCHED_DEADLINE,
  // which would need its own admission) leaves the daemon thread as it is.
  CallerScheduling(pid_t tid, bool enabled);
  ~CallerScheduling();
  CallerScheduling(const CallerScheduling&) = delete;
  CallerScheduling& operator=(const CallerScheduling&) = delete;

  // How many times this process changed a daemon thread's attributes (a counter for the stats
  // line and for tests).
  static std::uint64_t changes();
  // How many spinlock sections a daemon thread serving at a caller's attributes ran unpreemptible.
  static std::uint64_t unpreemptible_sections();

 private:
  bool changed_ = false;
};

// Whether `proc`'s device variant serves its requests at the caller's attributes.
inline bool serves_at_caller_priority(const core::Proc& proc) {
  return proc.options().exec_context == core::DeviceOptions::ExecContext::kCaller;
}

// The attributes of thread `tid` (0: the calling thread); false if they cannot be read.
bool read_scheduling(pid_t tid, SchedulingAttributes& out);
// Gives the calling thread `attributes`; false if the kernel refused.
bool apply_scheduling(const SchedulingAttributes& attributes);

}  // namespace cused
