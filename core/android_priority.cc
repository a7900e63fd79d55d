// SPDX-License-Identifier: GPL-2.0-only
// priority=android: the Android common kernel's priority inheritance (its drivers/android/
// binder.c: binder_transaction_priority, binder_do_set_priority, binder_restore_priority), which
// extends S4.12 from nice to scheduling policies. A node's flat_binder_object gives it a minimum
// policy and priority and says whether it inherits real time (FLAT_BINDER_FLAG_INHERIT_RT); the
// thread that receives a call runs at the caller's policy and priority (a real-time one only if
// the node inherits it), or the node's minimum when that is more urgent, and its reply restores
// what it had. Every OS call is the host's (core/thread_priority.h).
#include <algorithm>

#include "core/proc.h"

namespace cused::core {
namespace {

constexpr int kMinNice = -20, kMaxNice = 19;

// RLIMIT_NICE counts from 1 (nice 19) to 40 (nice -20).
long rlimit_to_nice(unsigned long rlimit) { return kMaxNice - static_cast<long>(rlimit) + 1; }

}  // namespace

SchedPriority Proc::sender_sched_priority(const Thread& thread, std::uint32_t flags,
                                          const Proc& target) const {
  if (flags & TF_ONE_WAY) return target.default_sched_priority_;
  auto current = priorities_ ? priorities_->scheduling(thread.tid) : std::nullopt;
  if (current && is_supported_policy(current->policy)) return *current;
  return target.default_sched_priority_;
}

void Proc::transaction_priority(Thread& thread, Transaction& t, const Node& node) const {
  if (!priorities_) return;
  {
    sync::LockGuard guard(t.lock);
    if (t.set_priority_called) return;
    t.set_priority_called = true;
  }
  SchedPriority desired = t.sched_priority;
  if (!node.inherit_rt && is_rt_policy(desired.policy)) desired = {};
  // The node's minimum when more urgent than what the caller asked (not what inherit_rt left of
  // it); at equal priority a SCHED_FIFO minimum wins, as it runs unbounded, unlike SCHED_RR.
  const SchedPriority& minimum = node.min_sched_priority;
  if (minimum.prio < t.sched_priority.prio ||
      (minimum.prio == t.sched_priority.prio && minimum.policy == kSchedFifo))
    desired = minimum;
  SchedPriority saved;
  {
    sync::LockGuard guard(thread.prio_lock);
    if (thread.prio_state == Thread::PrioState::kPending) {
      // The thread is between a reply's wake-up and its restore: what it is about to get back
      // is what this call must give back, and the restore must not undo this call's priority.
      saved = thread.prio_next;
      thread.prio_state = Thread::PrioState::kAbort;
    } else {
      saved = priorities_->scheduling(thread.tid).value_or(default_sched_priority_);
    }
  }
  {
    sync::LockGuard guard(t.lock);
    t.saved_sched_priority = saved;
  }
  set_sched_priority(thread, desired, true);
}

void Proc::set_sched_priority(Thread& thread, SchedPriority desired, bool verify) const {
  if (!priorities_) return;
  auto current = priorities_->scheduling(thread.tid);
  sync::LockGuard guard(thread.prio_lock);
  if (current == desired) {
    if (thread.prio_state == Thread::PrioState::kPending)
      thread.prio_state = Thread::PrioState::kSet;
    return;
  }
  int policy = desired.policy;
  long priority = to_userspace_prio(policy, desired.prio);
  // can_nice()'s rules, as the kernel checks the receiving task: without CAP_SYS_NICE real time
  // is bounded by RLIMIT_RTPRIO (none at 0: the most urgent nice instead), nice by RLIMIT_NICE
  // (none at 0: the thread keeps what it has).
  if (verify && !nice_permission_.cap_sys_nice) {
    if (is_rt_policy(policy)) {
      if (nice_permission_.rlimit_rtprio == 0) {
        policy = kSchedOther;
        priority = kMinNice;
      } else if (static_cast<unsigned long>(priority) > nice_permission_.rlimit_rtprio) {
        priority = static_cast<long>(nice_permission_.rlimit_rtprio);
      }
    }
    if (is_fair_policy(policy)) {
      const long min_nice = rlimit_to_nice(nice_permission_.rlimit_nice);
      if (min_nice > kMaxNice) return;
      priority = std::max(priority, min_nice);
    }
  }
  // A nested call reached the thread after its reply decided to restore: the call's priority
  // stays.
  if (!verify && thread.prio_state == Thread::PrioState::kAbort) return;
  priorities_->set_scheduling(thread.tid,
                              {policy, to_kernel_prio(policy, static_cast<int>(priority))});
  thread.prio_state = Thread::PrioState::kSet;
}

void Proc::restore_after_reply(Thread& thread, const Transaction& in_reply_to) const {
  SchedPriority saved;
  {
    sync::LockGuard guard(in_reply_to.lock);
    saved = in_reply_to.saved_sched_priority;
  }
  set_sched_priority(thread, saved, false);
}

}  // namespace cused::core
