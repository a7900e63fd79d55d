// SPDX-License-Identifier: GPL-2.0-only
#include "cused/thread_groups.h"

#include <charconv>
#include <string_view>

#include "cused/proc_status.h"

namespace cused {

pid_t read_thread_group(pid_t tid) {
  pid_t tgid = 0;
  read_proc_status(tid, [&](std::string_view name, std::string_view value) {
    if (name == "Tgid") std::from_chars(value.data(), value.data() + value.size(), tgid);
  });
  return tgid;
}

pid_t ThreadGroups::of(pid_t tid, bool* first_seen) {
  Clock::time_point now = now_();
  {
    sync::LockGuard guard(lock_);
    auto it = groups_.find(tid);
    if (first_seen) *first_seen = it == groups_.end();
    if (it != groups_.end() && now - it->second.read_at < kRecheck) return it->second.tgid;
  }
  pid_t tgid = reader_(tid);
  sync::LockGuard guard(lock_);
  if (tgid == 0) {
    groups_.erase(tid);
    return 0;
  }
  groups_.insert_or_assign(tid, Answer{tgid, now});
  if (groups_.size() > kPruneAbove) prune(now);
  return tgid;
}

std::size_t ThreadGroups::cached() {
  sync::LockGuard guard(lock_);
  return groups_.size();
}

void ThreadGroups::prune(Clock::time_point now) {
  std::erase_if(groups_, [&](const auto& entry) { return now - entry.second.read_at >= kRecheck; });
}

}  // namespace cused
