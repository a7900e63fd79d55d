// SPDX-License-Identifier: GPL-2.0-only
// The kernel's preempt_disable() / preempt_enable() around a spinlock, for the locks whose
// holders the lock experiments are about. In the kernel a thread holding a spinlock is never
// preempted, while a sleeping lock's holder can be: that difference is what the alloc-lock patch
// (alloc->mutex to a spinlock) relies on, since a low-priority task preempted while it holds
// alloc->mutex makes high-priority callers wait behind it. cused serves a request on a daemon
// thread running at its caller's priority (exec_context=caller, cused/request/
// caller_scheduling.h); such a thread registers a PreemptionControl here, and a section between
// preempt_disable() and preempt_enable() runs the way the kernel would run it. core marks the
// sections (core/alloc/alloc_lock.h); the host decides what "not preemptible" means for a
// userspace thread. A thread with no control (the default: every thread at the daemon's own
// priority) pays one thread-local load.
#pragma once

namespace cused::sync {

class PreemptionControl {
 public:
  virtual void disable() = 0;  // nests: only the outermost disable/enable pair acts
  virtual void enable() = 0;

 protected:
  ~PreemptionControl() = default;
};

// The calling thread's control, or null. Inline, as the sections it guards are: a spin-design
// allocator section reads it twice.
inline PreemptionControl*& thread_preemption_control() {
  static thread_local PreemptionControl* control = nullptr;
  return control;
}

inline void preempt_disable() {
  if (PreemptionControl* control = thread_preemption_control()) control->disable();
}
inline void preempt_enable() {
  if (PreemptionControl* control = thread_preemption_control()) control->enable();
}

}  // namespace cused::sync
