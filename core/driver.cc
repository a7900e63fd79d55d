#include "core/driver.h"

#include "core/proc.h"

namespace cused::core {

std::shared_ptr<Driver> Driver::shared_default() {
  static const auto driver = std::make_shared<Driver>();
  return driver;
}

void Driver::add_proc(const std::shared_ptr<Proc>& proc) {
  sync::LockGuard guard(procs_lock_);
  procs_.emplace(proc.get(), proc);
}

void Driver::remove_proc(const Proc& proc) {
  sync::LockGuard guard(procs_lock_);
  procs_.erase(&proc);
}

std::vector<std::shared_ptr<Proc>> Driver::procs_of(pid_t pid) const {
  std::vector<std::shared_ptr<Proc>> found;
  sync::LockGuard guard(procs_lock_);
  for (const auto& [key, weak] : procs_) {
    if (auto proc = weak.lock(); proc && proc->pid() == pid) found.push_back(std::move(proc));
  }
  return found;
}

std::size_t Driver::proc_count() const {
  sync::LockGuard guard(procs_lock_);
  return procs_.size();
}

}  // namespace cused::core
