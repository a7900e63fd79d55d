// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/task_names.h"

#include <cstdlib>
#include <string_view>
#include <utility>

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

// The program of thread group `tgid`: the last part of its argv[0] (a program run by path), else
// its main thread's comm; empty when it is gone.
std::string program_of(pid_t tgid) {
  const std::string dir = "/proc/" + std::to_string(tgid);
  std::string text;
  if (read_small_file(dir + "/cmdline", text) == 0 && !text.empty() && text.front() != '\0') {
    std::string argv0 = text.substr(0, text.find('\0'));
    return argv0.substr(argv0.rfind('/') + 1);
  }
  if (read_small_file(dir + "/comm", text) != 0) return "";
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
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

std::map<pid_t, std::string> TaskNames::programs() {
  std::lock_guard guard(mutex_);
  return programs_;
}

void TaskNames::clear() {
  std::lock_guard guard(mutex_);
  cache_.clear();
  programs_.clear();
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
  if (task.tgid > 0 && !programs_.contains(task.tgid)) {
    std::string program = program_of(task.tgid);
    if (!program.empty()) programs_.emplace(task.tgid, std::move(program));
  }
  return task;
}

}  // namespace cused::host
