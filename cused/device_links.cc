// SPDX-License-Identifier: GPL-2.0-only
#include "cused/device_links.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "cused/fatal_cleanup.h"

namespace cused {

namespace fs = std::filesystem;

namespace {

// A link left by an earlier cused (its target is gone or points into a binder mount) may be
// replaced; anything else at that path is someone else's.
bool replaceable(const fs::path& path, const std::string& target) {
  std::error_code error;
  auto status = fs::symlink_status(path, error);
  if (error || status.type() == fs::file_type::not_found) return true;
  if (status.type() != fs::file_type::symlink) return false;
  auto current = fs::read_symlink(path, error);
  return !error && (current == target || !fs::exists(path, error));
}

}  // namespace

DeviceLinks::DeviceLinks(const std::string& link_dir, const std::string& mountpoint,
                         const std::vector<std::string>& names) {
  for (const auto& name : names) {
    fs::path path = fs::path(link_dir) / name;
    std::string target = (fs::path(mountpoint) / name).string();
    if (!replaceable(path, target)) {
      fmt::print(stderr, "cused: not linking {}: something else is there (a real binder device?)\n",
                 path.string());
      continue;
    }
    std::error_code error;
    fs::remove(path, error);
    fs::create_symlink(target, path, error);
    if (error) {
      fmt::print(stderr, "cused: cannot link {}: {}\n", path.string(), error.message());
      continue;
    }
    links_.push_back({path.string(), target});
    FatalCleanup::add_link(path.string(), target);
    made_.push_back(path.string());
  }
}

DeviceLinks::~DeviceLinks() {
  for (const auto& link : links_) {
    FatalCleanup::remove_link(link.path);
    std::error_code error;
    if (fs::read_symlink(link.path, error) == link.target) fs::remove(link.path, error);
  }
}

}  // namespace cused
