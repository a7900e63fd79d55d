// SPDX-License-Identifier: GPL-2.0-only
// One binder device (a binderfs node such as `binder`, `hwbinder`): its context (the context
// manager slot, S1.2, S2.3) and its options, shared by every proc opened on it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/alloc/variant.h"
#include "core/buffer_file.h"
#include "core/client_mapping.h"
#include "core/device_options.h"
#include "core/locks.h"
#include "core/security.h"

namespace cused::core {

class Driver;
class Node;
class Proc;

// Who opened the node (S1.2): thread-group id, the opening thread, effective uid.
struct OpenerIdentity {
  pid_t pid = 0;
  pid_t tid = 0;
  uid_t euid = 0;
};

// binder_context: the context manager of one device.
class Context {
 public:
  explicit Context(sync::LockPolicy policy) : lock(policy) {}
  mutable ContextLock lock;
  std::shared_ptr<Node> manager CUSED_GUARDED_BY(lock);
  // S2.4: the first successful manager's euid, never forgotten.
  std::optional<uid_t> manager_uid CUSED_GUARDED_BY(lock);
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  explicit Device(std::string name, DeviceOptions options = {},
                  std::shared_ptr<Driver> driver = nullptr);
  ~Device();

  const std::string& name() const { return name_; }
  Driver& driver() { return *driver_; }
  Context& context() { return context_; }
  // The variant procs opened from now on get (docs/design.md section 5); procs already open keep
  // theirs.
  DeviceOptions options() const CUSED_EXCLUDES(options_lock_);
  void set_options(DeviceOptions options) CUSED_EXCLUDES(options_lock_);

  // A proc is opened on a device by Proc::open (core/proc.h).

 private:
  const std::string name_;
  mutable sync::Mutex options_lock_;
  DeviceOptions options_ CUSED_GUARDED_BY(options_lock_);
  const std::shared_ptr<Driver> driver_;
  Context context_;
};

}  // namespace cused::core
