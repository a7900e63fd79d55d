// SPDX-License-Identifier: GPL-2.0-only
// The directory `cused --mount DIR` serves, made ready before the daemon mounts: a dead mount a
// killed daemon left there is detached, a directory that a running cused serves is refused (a
// second FUSE mount stacked on it would hide the first daemon's clients from the second), and a
// missing directory is created, and removed again at exit.
#pragma once

#include <string>
#include <vector>

namespace cused {

class MountPoint {
 public:
  // Throws std::runtime_error with a message that says what to do.
  explicit MountPoint(const std::string& path);
  // Removes the directories the constructor created (still empty once the mount is gone).
  ~MountPoint();
  MountPoint(const MountPoint&) = delete;
  MountPoint& operator=(const MountPoint&) = delete;

 private:
  void remove_created();

  std::vector<std::string> created_;  // innermost last
};

}  // namespace cused
