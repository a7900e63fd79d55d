// SPDX-License-Identifier: GPL-2.0-only
// Notices that a binder client's OS thread has exited and releases its binder thread as
// BINDER_THREAD_EXIT would (S2.6). On the FUSE path the kernel's FUSE refuses that ioctl with
// EFAULT before cused sees it when its argument is NULL, and libbinder's thread destructor calls
// exactly ioctl(fd, BINDER_THREAD_EXIT, 0): without this, the binder thread of every exited
// libbinder thread would stay, and work queued to it (a reply it owed) would wait for nobody.
//
// One thread of its own waits (epoll) on a PIDFD_THREAD pidfd per watched thread (Linux >= 6.9),
// which becomes readable when that thread exits. Watching starts on a thread's first ioctl on a
// proc; a released proc's pidfds are closed (forget). A thread that exits with its whole process
// is left to the proc's release.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "core/sync/mutex.h"

namespace cused::core {
class Proc;
}

namespace cused {

// Whether process `tgid` is exiting as a whole (or is gone): then a thread of it that exits is
// not released on its own, and the proc's release does it all, as on the kernel.
bool process_exiting(pid_t tgid);

class ThreadExitWatcher {
 public:
  ThreadExitWatcher();
  ~ThreadExitWatcher();
  ThreadExitWatcher(const ThreadExitWatcher&) = delete;
  ThreadExitWatcher& operator=(const ThreadExitWatcher&) = delete;

  // Releases `tid`'s binder thread in `proc` once the OS thread exits. A thread already watched
  // for this proc, or one that cannot be watched (it is gone already, or the kernel has no thread
  // pidfds), is left as it is.
  void watch(const std::shared_ptr<core::Proc>& proc, pid_t tid) CUSED_EXCLUDES(lock_);
  // `proc` has been released: its threads need no watching any more.
  void forget(const core::Proc* proc) CUSED_EXCLUDES(lock_);
  // Threads being watched (tests).
  std::size_t watched() const CUSED_EXCLUDES(lock_);

 private:
  using Key = std::pair<const core::Proc*, pid_t>;
  struct Watch {
    std::weak_ptr<core::Proc> proc;
    int pidfd;
  };
  void run();
  // The watch whose pidfd became readable, taken out of the table.
  std::optional<std::pair<pid_t, std::weak_ptr<core::Proc>>> take(std::uint64_t id)
      CUSED_EXCLUDES(lock_);
  void start_thread() CUSED_REQUIRES(lock_);

  int epoll_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd that ends run()
  mutable sync::Mutex lock_;
  std::map<Key, std::uint64_t> ids_ CUSED_GUARDED_BY(lock_);
  std::map<std::uint64_t, std::pair<Key, Watch>> watches_ CUSED_GUARDED_BY(lock_);
  std::uint64_t next_id_ CUSED_GUARDED_BY(lock_) = 1;
  bool unsupported_ CUSED_GUARDED_BY(lock_) = false;  // said once: no thread pidfds here
  std::thread thread_;                                // started with the first watch
};

}  // namespace cused
