// SPDX-License-Identifier: GPL-2.0-only
#include "cused/mount_point.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "cused/binderfs/mount.h"
#include "cused/run/attach.h"

namespace cused {

namespace {

namespace fs = std::filesystem;

void refuse_if_served(const std::string& path) {
  auto pid = run::serving_daemon(path);
  if (!pid) return;
  throw std::runtime_error(fmt::format(
      "cused: {} is served already by cused pid {} (stop it with kill {}, or use that daemon)",
      path, *pid, *pid));
}

}  // namespace

MountPoint::MountPoint(const std::string& path) {
  if (binderfs::clean_stale_mount(path))
    fmt::print(stderr, "cused: removed a stale mount at {} (its daemon had died)\n", path);
  refuse_if_served(path);
  // Outermost first: each missing ancestor, then the directory itself.
  std::vector<fs::path> missing;
  for (fs::path dir = path; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    struct stat st {};
    if (lstat(dir.c_str(), &st) == 0) break;
    if (errno != ENOENT)
      throw std::runtime_error(
          fmt::format("cused: mount point {}: {}", dir.string(), std::strerror(errno)));
    missing.insert(missing.begin(), dir);
  }
  for (const auto& dir : missing) {
    if (mkdir(dir.c_str(), 0755) != 0) {
      int error = errno;
      remove_created();
      throw std::runtime_error(fmt::format("cused: cannot create the mount point {}: {}",
                                           dir.string(), std::strerror(error)));
    }
    created_.push_back(dir.string());
  }
}

MountPoint::~MountPoint() { remove_created(); }

void MountPoint::remove_created() {
  for (auto dir = created_.rbegin(); dir != created_.rend(); ++dir) rmdir(dir->c_str());
  created_.clear();
}

}  // namespace cused
