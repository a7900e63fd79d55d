// SPDX-License-Identifier: GPL-2.0-only
// The thread group of a request's thread. FUSE and CUSE name the calling thread (tid); binder
// needs its process too (S1.3). Shared by both frontends' open files.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <unordered_map>

#include "core/sync/mutex.h"

namespace cused {

// The thread group (Tgid) of a thread, from /proc/<tid>/status; 0 when the thread is gone.
pid_t read_thread_group(pid_t tid);

// read_thread_group, cached per tid. An answer is trusted for kRecheck: a tid can name another
// thread, even of another process sharing the open file, once its thread has exited and the
// kernel has handed the number out again, so the answer is read again after that long (one
// /proc read per thread per second, where the request path would otherwise read it every time).
class ThreadGroups {
 public:
  using Clock = std::chrono::steady_clock;
  using Reader = pid_t (*)(pid_t tid);
  using Now = Clock::time_point (*)();
  static constexpr Clock::duration kRecheck = std::chrono::seconds(1);
  // Past this many cached threads, answers older than kRecheck are dropped.
  static constexpr std::size_t kPruneAbove = 1024;

  explicit ThreadGroups(Reader reader = read_thread_group, Now now = Clock::now)
      : reader_(reader), now_(now) {}

  // `first_seen` (if given) is set when `tid` was not in the cache: a thread new to this cache
  // (or one pruned from it since).
  pid_t of(pid_t tid, bool* first_seen = nullptr) CUSED_EXCLUDES(lock_);
  std::size_t cached() CUSED_EXCLUDES(lock_);

 private:
  struct Answer {
    pid_t tgid;
    Clock::time_point read_at;
  };
  void prune(Clock::time_point now) CUSED_REQUIRES(lock_);

  const Reader reader_;
  const Now now_;
  sync::Mutex lock_;
  std::unordered_map<pid_t, Answer> groups_ CUSED_GUARDED_BY(lock_);
};

}  // namespace cused
