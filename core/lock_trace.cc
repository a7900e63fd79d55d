// SPDX-License-Identifier: GPL-2.0-only
#include "core/lock_trace.h"

namespace cused::core {
namespace {

std::uint64_t ns(trace::TraceClock::duration duration) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
}

}  // namespace

std::string_view to_string(TracedLock lock) {
  switch (lock) {
    case TracedLock::alloc:
      return "alloc";
    case TracedLock::alloc_install:
      return "alloc_install";
    case TracedLock::context:
      return "context";
    case TracedLock::proc_outer:
      return "proc_outer";
    case TracedLock::node:
      return "node";
    case TracedLock::proc_inner:
      return "proc_inner";
    case TracedLock::alloc_mmap:
      return "alloc_mmap";
    case TracedLock::mmap:
      return "mmap";
    case TracedLock::vma:
      return "vma";
  }
  return "unknown";
}

// Whom the waiter waits behind: the holder's task and its prio, read now (a holder whose hold
// began before the trace is unknown: holder=0, holder_prio=-1).
void LockTrace::contended() const {
  const pid_t holder = holder_.load(std::memory_order_relaxed);
  const int holder_prio = holder > 0 ? trace::task_prio(holder) : -1;
  trace::emit(TraceEventType::kLockContended, lock_, design_, policy_, holder, holder_prio);
}

// The hold starts when the wait ends: one clock read for both.
void LockTrace::acquired(trace::TraceClock::time_point since) {
  const auto now = trace::TraceClock::now();
  traced_ = true;
  hold_ = Hold{now, trace::involuntary_switches(), true};
  const pid_t task = trace::current_task().tid;
  holder_.store(task, std::memory_order_relaxed);
  trace::emit_at(now, TraceEventType::kLockAcquired, lock_, design_, policy_, ns(now - since),
                 trace::task_prio(task));
}

void LockTrace::begin_hold(bool contended) {
  traced_ = true;
  hold_ = Hold{trace::TraceClock::now(), trace::involuntary_switches(), contended};
  holder_.store(trace::current_task().tid, std::memory_order_relaxed);
}

// Still holding: the end of the hold and the holder's switches so far. A spinlock's release
// leaves the holder's unpreemptible section (core/sync/preemption.h), and a holder serving a
// less urgent caller is then often preempted at once; counted after the release, that switch
// made most such holds look preempted (docs/reproductions.md, run 7's 71 %).
LockTrace::Hold LockTrace::end_hold() {
  traced_ = false;
  holder_.store(0, std::memory_order_relaxed);
  Hold hold = hold_;
  hold.switches_after = trace::involuntary_switches();
  hold.until = trace::TraceClock::now();
  return hold;
}

// A contended hold is always emitted, so that each waiter's three events pair up, and so is every
// hold of a spinlock (the share of them preempted, core/lock_trace.h). Stamped now, not at the
// hold's end: the host writes events in time order only when they reach it within its settle
// time of their stamp, and a holder can be switched out between its release and this emission (a
// nice-19 caller's usually is, leaving its unpreemptible section), which put the line out of
// order (the integration test `trace` caught it).
void LockTrace::released(const Hold& hold) const {
  const auto held = hold.until - hold.since;
  if (!hold.contended && held < kLongHold && policy_ != kNoLockPolicy) return;
  trace::emit(TraceEventType::kLockReleased, lock_, design_, policy_, ns(held),
              trace::task_prio(trace::current_task().tid),
              hold.switches_after - hold.switches_before);
}

}  // namespace cused::core
