// SPDX-License-Identifier: GPL-2.0-only
#include "cused/devices/device_registry.h"

#include <linux/fs.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <variant>

#include "core/device_variant.h"
#include "core/sync/lock_guard.h"

namespace cused::devices {

namespace {

// What a file system refuses as a name; binderfs answers EACCES for these (S10.3).
bool valid_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace

DeviceRegistry::DeviceRegistry(RegistryOptions options) : options_(std::move(options)) {}

DeviceRegistry::Added DeviceRegistry::add_device(const std::string& name,
                                                 const core::DeviceOptions& variant,
                                                 Frontend frontend) {
  if (!valid_name(name)) return {.error = -EACCES};
  sync::LockGuard guard(devices_lock_);
  if (served_by(frontend) >= options_.max_devices) return {.error = -ENOSPC};
  if (find_locked(name)) return {.error = -EEXIST};
  devices_.push_back({name, std::make_shared<core::Device>(name, variant), frontend});
  return {.error = 0, .id = devices_.size() - 1};
}

void DeviceRegistry::remove_device(DeviceId id) {
  sync::LockGuard guard(devices_lock_);
  if (id < devices_.size()) devices_[id].removed = true;
}

int DeviceRegistry::unlink(const std::string& name, Frontend frontend) {
  sync::LockGuard guard(devices_lock_);
  auto id = find_locked(name);
  if (!id || devices_[*id].frontend != frontend) return -ENOENT;
  devices_[*id].removed = true;
  return 0;
}

int DeviceRegistry::rename(const std::string& from, const std::string& to, unsigned flags,
                           Frontend frontend) {
  sync::LockGuard guard(devices_lock_);
  auto source = find_locked(from);
  if (!source || devices_[*source].frontend != frontend) return -ENOENT;
  auto target = find_locked(to);
  if (target && devices_[*target].frontend != frontend) return -EEXIST;
  if (flags & RENAME_EXCHANGE) {
    if (!target) return -ENOENT;
    std::swap(devices_[*source].name, devices_[*target].name);
    return 0;
  }
  if (target && (flags & RENAME_NOREPLACE)) return -EEXIST;
  if (target == source) return 0;
  if (target) devices_[*target].removed = true;  // the old target's procs keep it
  devices_[*source].name = to;
  return 0;
}

std::shared_ptr<core::Device> DeviceRegistry::device(const std::string& name) const {
  sync::LockGuard guard(devices_lock_);
  auto id = find_locked(name);
  return id ? devices_[*id].device : nullptr;
}

std::shared_ptr<core::Device> DeviceRegistry::device(DeviceId id) const {
  sync::LockGuard guard(devices_lock_);
  return id < devices_.size() ? devices_[id].device : nullptr;
}

std::optional<DeviceId> DeviceRegistry::find(const std::string& name, Frontend frontend) const {
  sync::LockGuard guard(devices_lock_);
  auto id = find_locked(name);
  if (id && devices_[*id].frontend == frontend) return id;
  return std::nullopt;
}

std::optional<Frontend> DeviceRegistry::frontend_of(DeviceId id) const {
  sync::LockGuard guard(devices_lock_);
  if (id >= devices_.size()) return std::nullopt;
  return devices_[id].frontend;
}

std::vector<DeviceRegistry::Named> DeviceRegistry::devices_of(Frontend frontend) const {
  sync::LockGuard guard(devices_lock_);
  std::vector<Named> named;
  for (DeviceId id = 0; id < devices_.size(); ++id)
    if (!devices_[id].removed && devices_[id].frontend == frontend)
      named.push_back({id, devices_[id].name});
  return named;
}

std::vector<std::shared_ptr<core::Device>> DeviceRegistry::live_devices() const {
  sync::LockGuard guard(devices_lock_);
  std::vector<std::shared_ptr<core::Device>> live;
  for (const auto& entry : devices_)
    if (!entry.removed) live.push_back(entry.device);
  return live;
}

std::optional<DeviceId> DeviceRegistry::find_locked(const std::string& name) const {
  for (DeviceId id = 0; id < devices_.size(); ++id)
    if (!devices_[id].removed && devices_[id].name == name) return id;
  return std::nullopt;
}

std::size_t DeviceRegistry::served_by(Frontend frontend) const {
  return static_cast<std::size_t>(std::count_if(
      devices_.begin(), devices_.end(),
      [frontend](const Entry& entry) { return !entry.removed && entry.frontend == frontend; }));
}

std::optional<core::DeviceOptions> DeviceRegistry::variant(const std::string& name) const {
  auto found = device(name);
  if (!found) return std::nullopt;
  return found->options();
}

DeviceRegistry::VariantChange DeviceRegistry::set_variant(const std::string& name,
                                                          const std::string& spec) {
  auto found = device(name);
  if (!found) return {.error = ENOENT};
  // Read, apply, write as one step: keys the spec leaves out keep the device's current values,
  // including those another change just set.
  sync::LockGuard guard(variant_change_lock_);
  auto parsed = core::parse_device_variant(spec, found->options());
  if (auto* error = std::get_if<core::VariantSpecError>(&parsed))
    return {EINVAL, found->options(), error->message};
  found->set_options(std::get<core::DeviceOptions>(parsed));
  return {.error = 0, .variant = std::get<core::DeviceOptions>(parsed)};
}

std::optional<core::alloc::ReclaimResult> DeviceRegistry::shrink_now() const {
  if (!options_.shrink_now) return std::nullopt;
  return options_.shrink_now();
}

void DeviceRegistry::add_open(std::shared_ptr<core::Proc> proc, bool nonblock,
                              std::optional<FileIdentity> file) {
  const core::Proc* key = proc.get();
  sync::LockGuard guard(opens_lock_);
  if (file) opens_by_file_[*file] = key;
  opens_.insert_or_assign(key, Open{std::move(proc), nonblock, file});
}

void DeviceRegistry::remove_open(const core::Proc& proc) {
  {
    sync::LockGuard guard(opens_lock_);
    auto open = opens_.find(&proc);
    if (open == opens_.end()) return;
    if (open->second.file) {
      auto by_file = opens_by_file_.find(*open->second.file);
      if (by_file != opens_by_file_.end() && by_file->second == &proc)
        opens_by_file_.erase(by_file);
    }
    opens_.erase(open);
  }
  tell_observer(proc);
}

void DeviceRegistry::descriptor_closed(const core::Proc& proc) const { tell_observer(proc); }

void DeviceRegistry::set_close_observer(std::function<void(const core::Proc&)> observer) {
  sync::LockGuard guard(observer_lock_);
  close_observer_ = std::move(observer);
}

// Under the lock: whoever clears the observer (a RunServer going away) knows that no call into
// it is still running once set_close_observer has returned.
void DeviceRegistry::tell_observer(const core::Proc& proc) const {
  sync::LockGuard guard(observer_lock_);
  if (close_observer_) close_observer_(proc);
}

OpenProc DeviceRegistry::open_of(const FileIdentity& file) const {
  sync::LockGuard guard(opens_lock_);
  auto by_file = opens_by_file_.find(file);
  if (by_file == opens_by_file_.end()) return {};
  const Open& open = opens_.at(by_file->second);
  return {open.proc, open.nonblock};
}

std::vector<std::shared_ptr<core::Proc>> DeviceRegistry::procs_of(pid_t tgid) const {
  sync::LockGuard guard(opens_lock_);
  std::vector<std::shared_ptr<core::Proc>> procs;
  for (const auto& [key, open] : opens_)
    if (open.proc->pid() == tgid) procs.push_back(open.proc);
  return procs;
}

void DeviceRegistry::for_each_proc_of(pid_t tgid,
                                      const std::function<void(core::Proc&)>& visit) const {
  for (const auto& proc : procs_of(tgid)) visit(*proc);
}

std::size_t DeviceRegistry::open_procs() const {
  sync::LockGuard guard(opens_lock_);
  return opens_.size();
}

}  // namespace cused::devices
