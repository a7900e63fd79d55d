#include "cused/host/task_names.h"

#include <cstdlib>
#include <string_view>

#include "cused/host/read_small_file.h"

namespace cused::host {
namespace {

// /proc/<tid>/status's "Tgid:" line; 0 when there is none.
pid_t tgid_of(std::string_view status) {
  constexpr std::string_view kKey = "\nTgid:";
  std::size_t at = status.find(kKey);
  if (at == std::string_view::npos) return 0;
  return static_cast<pid_t>(std::strtol(status.data() + at + kKey.size(), nullptr, 10));
}

}  // namespace

void TaskNames::note(pid_t tid) {
  std::lock_guard guard(mutex_);
  lookup(tid);
}

TaskNames::Task TaskNames::of(pid_t tid) {
  std::lock_guard guard(mutex_);
  return lookup(tid);
}

void TaskNames::clear() {
  std::lock_guard guard(mutex_);
  cache_.clear();
}

const TaskNames::Task& TaskNames::lookup(pid_t tid) {
  auto [it, inserted] = cache_.try_emplace(tid);
  if (!inserted) return it->second;
  Task& task = it->second;
  const std::string dir = "/proc/" + std::to_string(tid);
  if (read_small_file(dir + "/comm", task.comm) != 0 || task.comm.empty()) {
    task.comm = "<...>";
    return task;
  }
  if (task.comm.back() == '\n') task.comm.pop_back();
  std::string status;
  if (read_small_file(dir + "/status", status) == 0) task.tgid = tgid_of(status);
  return task;
}

}  // namespace cused::host
