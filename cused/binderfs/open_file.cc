#include "cused/binderfs/open_file.h"

#include <charconv>
#include <fstream>
#include <string>

namespace cused::binderfs {

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

pid_t OpenFile::thread_group_of(pid_t tid) {
  {
    sync::LockGuard guard(lock_);
    auto it = thread_groups_.find(tid);
    if (it != thread_groups_.end()) return it->second;
  }
  pid_t tgid = read_thread_group(tid);
  sync::LockGuard guard(lock_);
  if (tgid != 0) thread_groups_.emplace(tid, tgid);
  return tgid;
}

}  // namespace cused::binderfs
