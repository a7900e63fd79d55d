// S4.12: binder's nice inheritance changes the nice of client threads, which the kernel does on
// `current` (binder_set_nice). core decides what a thread's nice becomes (core/priority.cc); the
// host reads and sets it (cused/thread_priorities.h). Without one, no priority changes.
#pragma once

#include <sys/types.h>

#include <optional>

namespace cused::core {

// What can_nice() looks at for a thread that asks to become more urgent.
struct NicePermission {
  bool cap_sys_nice = false;      // CAP_SYS_NICE: any nice
  unsigned long rlimit_nice = 0;  // RLIMIT_NICE's soft limit: nice down to 20 - rlimit_nice
};

class ThreadPriorities {
 public:
  virtual ~ThreadPriorities() = default;
  // task_nice of thread `tid`; nullopt when it cannot be read (the thread is gone).
  virtual std::optional<int> nice(pid_t tid) = 0;
  // What the thread may set; read once per proc, at open (the opener's).
  virtual NicePermission permission(pid_t tid) = 0;
  // set_user_nice: `nice` is in [-20, 19].
  virtual void set_nice(pid_t tid, int nice) = 0;
};

}  // namespace cused::core
