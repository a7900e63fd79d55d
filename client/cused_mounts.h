// SPDX-License-Identifier: GPL-2.0-only
// Where cused serves binderfs on this machine: its FUSE mounts (fsname "cused") as /proc/mounts
// lists them. binderctl finds its daemon with it; a client's failed open says with it whether a
// daemon serves the device's directory.
#pragma once

#include <string>
#include <vector>

namespace cused::client {

// The mount points of every cused (fsname "cused") in `mounts_file` (/proc/mounts format).
std::vector<std::string> find_cused_mounts(const std::string& mounts_file = "/proc/mounts");

}  // namespace cused::client
