#include "core/driver.h"

#include <algorithm>
#include <utility>

namespace cused::core {

std::shared_ptr<Driver> Driver::shared_default() {
  static const auto driver = std::make_shared<Driver>();
  return driver;
}

void Driver::add_proc(pid_t pid, const std::shared_ptr<Proc>& proc) {
  sync::LockGuard guard(procs_lock_);
  procs_.emplace(proc.get(), Registered{pid, proc});
}

void Driver::remove_proc(const Proc& proc) {
  sync::LockGuard guard(procs_lock_);
  procs_.erase(&proc);
}

std::vector<std::shared_ptr<Proc>> Driver::procs_of(pid_t pid) const {
  std::vector<std::shared_ptr<Proc>> found;
  sync::LockGuard guard(procs_lock_);
  for (const auto& [key, registered] : procs_) {
    if (registered.pid != pid) continue;
    if (auto proc = registered.proc.lock()) found.push_back(std::move(proc));
  }
  return found;
}

std::size_t Driver::proc_count() const {
  sync::LockGuard guard(procs_lock_);
  return procs_.size();
}

std::vector<std::shared_ptr<Proc>> Driver::procs() const {
  std::vector<std::pair<pid_t, std::shared_ptr<Proc>>> by_pid;
  {
    sync::LockGuard guard(procs_lock_);
    for (const auto& [key, registered] : procs_)
      if (auto proc = registered.proc.lock()) by_pid.emplace_back(registered.pid, std::move(proc));
  }
  std::stable_sort(by_pid.begin(), by_pid.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::shared_ptr<Proc>> found;
  found.reserve(by_pid.size());
  for (auto& [pid, proc] : by_pid) found.push_back(std::move(proc));
  return found;
}

void Driver::add_dead_node(const std::shared_ptr<Node>& node) {
  sync::LockGuard guard(dead_nodes_lock_);
  std::erase_if(dead_nodes_, [](const std::weak_ptr<Node>& weak) { return weak.expired(); });
  dead_nodes_.push_back(node);
}

std::vector<std::shared_ptr<Node>> Driver::dead_nodes() {
  std::vector<std::shared_ptr<Node>> alive;
  sync::LockGuard guard(dead_nodes_lock_);
  for (const auto& weak : dead_nodes_)
    if (auto node = weak.lock()) alive.push_back(std::move(node));
  return alive;
}

}  // namespace cused::core
