// The host side of S4.12 (core/thread_priority.h): a client thread's nice read and set by tid,
// as binder_set_nice sets `current`'s. The daemon is root, so it can set any nice; core applies
// can_nice()'s rule for the opener first (the permission read here).
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
};

}  // namespace cused
