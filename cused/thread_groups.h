// The thread group of a request's thread. FUSE and CUSE name the calling thread (tid); binder
// needs its process too (S1.3). Shared by both frontends' open files.
#pragma once

#include <sys/types.h>

#include <unordered_map>

#include "core/sync/mutex.h"

namespace cused {

// The thread group (Tgid) of a thread, from /proc/<tid>/status; 0 when the thread is gone.
pid_t read_thread_group(pid_t tid);

// read_thread_group once per thread, then cached: a tid stays in its group for the thread's life.
class ThreadGroups {
 public:
  pid_t of(pid_t tid) CUSED_EXCLUDES(lock_);

 private:
  sync::Mutex lock_;
  std::unordered_map<pid_t, pid_t> groups_ CUSED_GUARDED_BY(lock_);
};

}  // namespace cused
