// SPDX-License-Identifier: GPL-2.0-only
// The memory cgroup a block's daemon runs in (binder-ab run's conditions.memcg): a limit of its
// own, so that the kernel's reclaim makes the daemon's page installs slow as on a phone under
// memory pressure. Made for one block and removed with it, also on Ctrl-C (a StopCleanup).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>

#include "tools/ab/stop_signals.h"

namespace cused::tools::ab {

class MemoryCgroup {
 public:
  // A new cgroup under the machine's memory hierarchy (v2 when /sys/fs/cgroup has the memory
  // controller, else v1's /sys/fs/cgroup/memory), limited to `mib` MiB. Throws
  // std::runtime_error where there is no writable memory hierarchy.
  explicit MemoryCgroup(long mib);
  // Ends whatever is still in it, then removes it.
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  void add(pid_t pid) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::optional<StopCleanup> on_stop_signal_;
};

}  // namespace cused::tools::ab
