// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/memory_cgroup.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace cused::tools::ab {

namespace {

std::filesystem::path memory_hierarchy() {
  if (access("/sys/fs/cgroup/memory/cgroup.procs", W_OK) == 0) return "/sys/fs/cgroup/memory";
  std::ifstream controllers("/sys/fs/cgroup/cgroup.controllers");
  std::string word;
  while (controllers >> word)
    if (word == "memory") return "/sys/fs/cgroup";
  throw std::runtime_error("conditions.memcg: no writable memory cgroup hierarchy here");
}

void write_value(const std::filesystem::path& file, const std::string& value) {
  std::ofstream out(file);
  out << value;
  if (!out.flush())
    throw std::runtime_error(fmt::format("cannot write {} to {}", value, file.string()));
}

// Kills what is left in `path` and removes it, retrying while the killed leave (rmdir fails on a
// cgroup with members).
void remove_cgroup(const std::filesystem::path& path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (rmdir(path.c_str()) == 0 || errno == ENOENT) return;
    std::ifstream procs(path / "cgroup.procs");
    pid_t pid;
    while (procs >> pid) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

MemoryCgroup::MemoryCgroup(long mib) {
  static std::atomic<int> made{0};
  path_ = memory_hierarchy() / fmt::format("cused-ab-{}-{}", getpid(), made++);
  std::filesystem::create_directory(path_);
  on_stop_signal_.emplace([path = path_] { remove_cgroup(path); });
  auto bytes = std::to_string(mib << 20);
  if (std::filesystem::exists(path_ / "memory.limit_in_bytes"))
    write_value(path_ / "memory.limit_in_bytes", bytes);
  else
    write_value(path_ / "memory.max", bytes);
}

MemoryCgroup::~MemoryCgroup() {
  remove_cgroup(path_);
  on_stop_signal_.reset();  // after: a stop signal meanwhile removes it too, harmlessly
}

void MemoryCgroup::add(pid_t pid) const {
  write_value(path_ / "cgroup.procs", std::to_string(pid));
}

}  // namespace cused::tools::ab
