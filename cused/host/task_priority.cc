#include "cused/host/task_priority.h"

#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <unordered_map>

namespace cused::host {
namespace {

// The prios this daemon thread read lately, by task.
class PrioCache {
 public:
  int prio(pid_t tid) {
    const auto now = std::chrono::steady_clock::now();
    auto it = read_.find(tid);
    if (it != read_.end() && now - it->second.read_at < kPrioStaleAfter) return it->second.prio;
    if (read_.size() >= kMaxTasks) read_.clear();
    const auto priority = read_task_priority(tid);
    const int prio = priority ? priority->prio : -1;
    read_[tid] = {prio, now};
    return prio;
  }

 private:
  static constexpr std::size_t kMaxTasks = 4096;  // forgotten all at once past this
  struct Read {
    int prio;
    std::chrono::steady_clock::time_point read_at;
  };
  std::unordered_map<pid_t, Read> read_;
};

thread_local PrioCache this_thread_prios;

}  // namespace

std::optional<int> read_task_nice(pid_t tid) {
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (nice == -1 && errno != 0) return std::nullopt;
  return nice;
}

std::optional<core::SchedPriority> read_task_priority(pid_t tid) {
  const int policy = sched_getscheduler(tid);
  if (policy < 0) return std::nullopt;
  core::SchedPriority priority{policy & ~SCHED_RESET_ON_FORK, 0};
  if (core::is_rt_policy(priority.policy)) {
    sched_param param{};
    if (sched_getparam(tid, &param) != 0) return std::nullopt;
    priority.prio = core::to_kernel_prio(priority.policy, param.sched_priority);
    return priority;
  }
  // SCHED_IDLE and SCHED_DEADLINE are not binder's; their nice stands in for normal_prio.
  auto current = read_task_nice(tid);
  if (!current) return std::nullopt;
  priority.prio = core::to_kernel_prio(SCHED_OTHER, *current);
  return priority;
}

int cached_task_prio(pid_t tid) { return this_thread_prios.prio(tid); }

std::uint64_t thread_involuntary_switches() {
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_nivcsw);
}

}  // namespace cused::host
