// SPDX-License-Identifier: GPL-2.0-only
// The directory a `binder-ab run` comparison mounts its blocks' daemons on (/tmp/cused-ab-XXXXXX),
// and each block's unmount of it: a daemon killed by a signal leaves its FUSE mount behind, so the
// block unmounts whatever is there when it ends, and the comparison removes the directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "tools/ab/stop_signals.h"

namespace cused::tools::ab {

// Lazily unmounts `path` (MNT_DETACH); nothing when nothing is mounted there.
void unmount(const std::filesystem::path& path);

class MountPoint {
 public:
  MountPoint();   // a new empty directory under /tmp
  ~MountPoint();  // unmounted and removed
  MountPoint(const MountPoint&) = delete;
  MountPoint& operator=(const MountPoint&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
  std::optional<StopCleanup> on_stop_signal_;
};

// A block's mount: whatever is mounted on `path` when it goes (normally or on Ctrl-C) is unmounted.
class BlockMount {
 public:
  explicit BlockMount(std::filesystem::path path);
  ~BlockMount();
  BlockMount(const BlockMount&) = delete;
  BlockMount& operator=(const BlockMount&) = delete;

 private:
  std::filesystem::path path_;
  std::optional<StopCleanup> on_stop_signal_;
};

}  // namespace cused::tools::ab
