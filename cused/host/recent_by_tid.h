// SPDX-License-Identifier: GPL-2.0-only
// What a daemon thread read lately about each client thread (its scheduling attributes, its
// prio), kept for a bound so that serving or tracing a burst of calls from one thread costs one
// system call, not one per call, and a thread that changes its attributes is followed within the
// bound. One per daemon thread (thread_local): no lock.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <unordered_map>

namespace cused::host {

template <typename Value>
class RecentByTid {
 public:
  static constexpr std::size_t kMaxThreads = 4096;  // forgotten all at once past this

  explicit RecentByTid(std::chrono::steady_clock::duration stale_after)
      : stale_after_(stale_after) {}

  // `tid`'s value read less than stale_after ago, else `read(tid, out)` anew (kept when it
  // returns true); false when it cannot be read.
  template <typename Read>
  bool get(pid_t tid, Value& out, Read&& read) {
    const auto now = std::chrono::steady_clock::now();
    auto it = read_.find(tid);
    if (it != read_.end() && now - it->second.read_at < stale_after_) {
      out = it->second.value;
      return true;
    }
    if (!read(tid, out)) return false;
    if (read_.size() >= kMaxThreads) read_.clear();
    read_[tid] = {out, now};
    return true;
  }

 private:
  struct Read {
    Value value;
    std::chrono::steady_clock::time_point read_at;
  };
  const std::chrono::steady_clock::duration stale_after_;
  std::unordered_map<pid_t, Read> read_;
};

}  // namespace cused::host
