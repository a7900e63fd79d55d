// SPDX-License-Identifier: GPL-2.0-only
#include "core/driver.h"

namespace cused::core {

std::shared_ptr<Driver> Driver::shared_default() {
  static const auto driver = std::make_shared<Driver>();
  return driver;
}

void Driver::add_proc(pid_t pid, const std::shared_ptr<Proc>& proc) {
  sync::LockGuard guard(procs_lock_);
  procs_.emplace(pid, proc);
}

void Driver::remove_proc(pid_t pid, const Proc& proc) {
  sync::LockGuard guard(procs_lock_);
  auto [first, last] = procs_.equal_range(pid);
  for (auto it = first; it != last; ++it) {
    // A proc is removed before its last reference goes (release), so its entry still locks.
    if (it->second.lock().get() == &proc) {
      procs_.erase(it);
      return;
    }
  }
}

std::vector<std::shared_ptr<Proc>> Driver::procs_of(pid_t pid) const {
  std::vector<std::shared_ptr<Proc>> found;
  sync::LockGuard guard(procs_lock_);
  auto [first, last] = procs_.equal_range(pid);
  for (auto it = first; it != last; ++it)
    if (auto proc = it->second.lock()) found.push_back(std::move(proc));
  return found;
}

std::size_t Driver::proc_count() const {
  sync::LockGuard guard(procs_lock_);
  return procs_.size();
}

std::vector<std::shared_ptr<Proc>> Driver::procs() const {
  std::vector<std::shared_ptr<Proc>> found;
  sync::LockGuard guard(procs_lock_);
  for (const auto& [pid, weak] : procs_)
    if (auto proc = weak.lock()) found.push_back(std::move(proc));
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
