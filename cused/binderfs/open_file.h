// One open file description of a binderfs node, as FUSE's file handle (fi->fh) names it: the
// core proc behind a device node (none for binder-control), its passthrough backing id, and the
// thread-group cache that turns the request's tid into the caller's process.
#pragma once

#include <sys/types.h>

#include <memory>
#include <unordered_map>

#include "core/proc.h"
#include "core/sync/mutex.h"

namespace cused::binderfs {

class OpenFile {
 public:
  OpenFile(std::shared_ptr<core::Proc> proc, int backing_id, bool nonblock)
      : proc_(std::move(proc)), backing_id_(backing_id), nonblock_(nonblock) {}

  const std::shared_ptr<core::Proc>& proc() const { return proc_; }
  int backing_id() const { return backing_id_; }
  bool nonblock() const { return nonblock_; }

  // FUSE names the calling thread; binder needs its thread group too (S1.3). Read once per
  // thread from /proc, then cached: a tid stays in its group for the thread's life.
  pid_t thread_group_of(pid_t tid);

 private:
  const std::shared_ptr<core::Proc> proc_;
  const int backing_id_;
  const bool nonblock_;  // O_NONBLOCK at open (FUSE does not forward later fcntl changes)
  sync::Mutex lock_;
  std::unordered_map<pid_t, pid_t> thread_groups_ CUSED_GUARDED_BY(lock_);
};

// The thread group (Tgid) of a thread, from /proc/<tid>/status; 0 when the thread is gone.
pid_t read_thread_group(pid_t tid);

}  // namespace cused::binderfs
