// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/mount_point.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace cused::tools::ab {

void unmount(const std::filesystem::path& path) {
  // Repeated: a path can hold stacked mounts (a block killed before it unmounted).
  for (int layer = 0; layer < 8 && umount2(path.c_str(), MNT_DETACH) == 0; ++layer) {
  }
}

MountPoint::MountPoint() {
  std::string pattern = "/tmp/cused-ab-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp");
  path_ = pattern;
  on_stop_signal_.emplace([path = path_] {
    unmount(path);
    rmdir(path.c_str());
  });
}

MountPoint::~MountPoint() {
  unmount(path_);
  rmdir(path_.c_str());
  on_stop_signal_.reset();  // after: a stop signal meanwhile does the same, harmlessly
}

BlockMount::BlockMount(std::filesystem::path path) : path_(std::move(path)) {
  unmount(path_);  // a fresh mount: nothing a killed block left
  on_stop_signal_.emplace([path = path_] { unmount(path); });
}

BlockMount::~BlockMount() {
  unmount(path_);
  on_stop_signal_.reset();
}

}  // namespace cused::tools::ab
