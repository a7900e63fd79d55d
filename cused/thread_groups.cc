#include "cused/thread_groups.h"

#include <charconv>
#include <fstream>
#include <string>

namespace cused {

pid_t read_thread_group(pid_t tid) {
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  constexpr std::string_view kTgid = "Tgid:";
  while (std::getline(status, line)) {
    if (line.compare(0, kTgid.size(), kTgid) != 0) continue;
    auto digits = line.find_first_of("0123456789");
    pid_t tgid = 0;
    if (digits != std::string::npos)
      std::from_chars(line.data() + digits, line.data() + line.size(), tgid);
    return tgid;
  }
  return 0;
}

pid_t ThreadGroups::of(pid_t tid) {
  {
    sync::LockGuard guard(lock_);
    auto it = groups_.find(tid);
    if (it != groups_.end()) return it->second;
  }
  pid_t tgid = read_thread_group(tid);
  sync::LockGuard guard(lock_);
  if (tgid != 0) groups_.emplace(tid, tgid);
  return tgid;
}

}  // namespace cused
