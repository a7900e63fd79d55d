#include "cused/thread_priorities.h"

#include <sys/resource.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <string>

#include "cused/proc_status.h"

namespace cused {
namespace {

constexpr int kCapSysNice = 23;  // linux/capability.h

bool has_cap_sys_nice(pid_t tid) {
  std::uint64_t effective = 0;
  read_proc_status(tid, [&](std::string_view name, std::string_view value) {
    if (name == "CapEff") std::from_chars(value.data(), value.data() + value.size(), effective, 16);
  });
  return effective & (std::uint64_t{1} << kCapSysNice);
}

}  // namespace

std::optional<int> HostThreadPriorities::nice(pid_t tid) {
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (nice == -1 && errno != 0) return std::nullopt;
  return nice;
}

core::NicePermission HostThreadPriorities::permission(pid_t tid) {
  core::NicePermission permission;
  permission.cap_sys_nice = has_cap_sys_nice(tid);
  rlimit limit{};
  if (prlimit(tid, RLIMIT_NICE, nullptr, &limit) == 0) permission.rlimit_nice = limit.rlim_cur;
  return permission;
}

void HostThreadPriorities::set_nice(pid_t tid, int nice) {
  // A thread that has gone (ESRCH) needs no priority; nothing else can fail for root.
  setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice);
}

}  // namespace cused
