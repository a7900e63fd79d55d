// SPDX-License-Identifier: GPL-2.0-only
// Which binder proc a `cused run` program's descriptor names. The kernel hands the daemon a
// notification with the caller's tid and its raw arguments, so an ioctl on fd N must be mapped to
// the open behind N: statx of /proc/<tid>/fd/<N> gives the file's device and inode without asking
// the file system (AT_STATX_DONT_SYNC), and each open of a binderfs device node has an inode of
// its own, by which the device registry knows it (devices::DeviceRegistry::open_of). The answer is
// cached per (process, fd) until a descriptor of that proc is closed (FUSE flush or release, dup2
// over it included): any cached fd may then name another file, so every entry of that proc goes.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

#include "core/proc.h"
#include "core/sync/mutex.h"
#include "cused/devices/device_registry.h"

namespace cused::run {

class FdResolver {
 public:
  explicit FdResolver(const devices::DeviceRegistry& registry) : registry_(registry) {}

  struct Resolved {
    std::shared_ptr<core::Proc> proc;  // null: not an open of a binder node
    bool nonblock = false;
  };
  // The open behind descriptor `fd` of process `tgid`, looked at through its thread `tid`.
  Resolved resolve(pid_t tgid, pid_t tid, int fd) CUSED_EXCLUDES(lock_);
  // A descriptor of `proc` was closed.
  void forget(const core::Proc& proc) CUSED_EXCLUDES(lock_);
  std::size_t cached() const CUSED_EXCLUDES(lock_);

 private:
  using Key = std::pair<pid_t, int>;
  struct Entry {
    std::weak_ptr<core::Proc> proc;
    const core::Proc* key;
    bool nonblock;
  };
  Resolved look_up(pid_t tid, int fd) const;

  const devices::DeviceRegistry& registry_;
  mutable sync::Mutex lock_;
  std::map<Key, Entry> entries_ CUSED_GUARDED_BY(lock_);
  std::unordered_multimap<const core::Proc*, Key> keys_of_ CUSED_GUARDED_BY(lock_);
};

}  // namespace cused::run
