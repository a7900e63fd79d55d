// SPDX-License-Identifier: GPL-2.0-only
// S4.12: binder's nice inheritance changes the nice of client threads, which the kernel does on
// `current` (binder_set_nice). core decides what a thread's nice becomes (core/priority.cc); the
// host reads and sets it (cused/thread_priorities.h). Without one, no priority changes.
// priority=android (core/android_priority.cc) sets scheduling policies as well: the host then
// sets SCHED_FIFO / SCHED_RR too.
#pragma once

#include <sys/types.h>

#include <optional>

namespace cused::core {

// The scheduling policies as binder's flat_binder_object flags and the kernel's uapi number them
// (SCHED_NORMAL 0, SCHED_FIFO 1, SCHED_RR 2, SCHED_BATCH 3); the host layer checks them against
// <sched.h>, which core does not include.
inline constexpr int kSchedOther = 0, kSchedFifo = 1, kSchedRr = 2, kSchedBatch = 3;

// What can_nice() looks at for a thread that asks to become more urgent.
struct NicePermission {
  bool cap_sys_nice = false;        // CAP_SYS_NICE: any nice, any real-time priority
  unsigned long rlimit_nice = 0;    // RLIMIT_NICE's soft limit: nice down to 20 - rlimit_nice
  unsigned long rlimit_rtprio = 0;  // RLIMIT_RTPRIO's soft limit: SCHED_FIFO/RR up to it, 0 none
};

// A thread's scheduling as the kernel's task holds it: the policy and normal_prio, where 0..99
// is real time (99 - sched_priority) and 100..139 is SCHED_NORMAL/SCHED_BATCH (120 + nice).
// Lower is more urgent, across both.
struct SchedPriority {
  int policy = kSchedOther;
  int prio = 120;
  friend bool operator==(const SchedPriority&, const SchedPriority&) = default;
};

inline bool is_rt_policy(int policy) { return policy == kSchedFifo || policy == kSchedRr; }
inline bool is_fair_policy(int policy) { return policy == kSchedOther || policy == kSchedBatch; }
constexpr int kMaxRtPrio = 100;    // MAX_RT_PRIO
constexpr int kDefaultPrio = 120;  // NICE_TO_PRIO(0)
inline bool is_supported_policy(int policy) {
  return is_fair_policy(policy) || is_rt_policy(policy);
}
// The user's value of a policy's priority (nice, or sched_priority) and back.
inline int to_userspace_prio(int policy, int prio) {
  return is_fair_policy(policy) ? prio - kDefaultPrio : kMaxRtPrio - 1 - prio;
}
inline int to_kernel_prio(int policy, int user_priority) {
  return is_fair_policy(policy) ? user_priority + kDefaultPrio : kMaxRtPrio - 1 - user_priority;
}

class ThreadPriorities {
 public:
  virtual ~ThreadPriorities() = default;
  // task_nice of thread `tid`; nullopt when it cannot be read (the thread is gone).
  virtual std::optional<int> nice(pid_t tid) = 0;
  // What the thread may set; read once per proc, at open (the opener's).
  virtual NicePermission permission(pid_t tid) = 0;
  // set_user_nice: `nice` is in [-20, 19].
  virtual void set_nice(pid_t tid, int nice) = 0;
  // The thread's policy and normal_prio; nullopt when it is gone. A host that knows only nice
  // (the default) sees every thread as SCHED_NORMAL.
  virtual std::optional<SchedPriority> scheduling(pid_t tid) {
    auto current = nice(tid);
    if (!current) return std::nullopt;
    return SchedPriority{kSchedOther, to_kernel_prio(kSchedOther, *current)};
  }
  // sched_setscheduler_nocheck(policy | SCHED_RESET_ON_FORK) when the policy changes or is real
  // time, and for a fair policy set_user_nice, which ignores a nice out of [-20, 19]: what
  // binder_do_set_priority does once it has decided.
  virtual void set_scheduling(pid_t tid, SchedPriority priority) {
    const int nice = to_userspace_prio(priority.policy, priority.prio);
    if (is_fair_policy(priority.policy) && nice >= -20 && nice <= 19) set_nice(tid, nice);
  }
};

// The thread's scheduling when binder supports its policy (SCHED_NORMAL, SCHED_BATCH, SCHED_FIFO,
// SCHED_RR), else SCHED_NORMAL at nice 0: binder_open's default_priority. Null host: the latter.
inline SchedPriority supported_sched_priority(ThreadPriorities* host, pid_t tid) {
  auto current = host ? host->scheduling(tid) : std::nullopt;
  if (current && is_supported_policy(current->policy)) return *current;
  return {};
}

}  // namespace cused::core
