// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/scratch_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace cused::host {

namespace fs = std::filesystem;

namespace {

// Between mkdtemp and flock a live owner's folder is briefly unlocked: only folders untouched for
// this long are taken for a dead owner's.
constexpr auto kStaleAfter = std::chrono::minutes(1);

int open_locked(const fs::path& folder, int operation) {
  const int fd = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (flock(fd, operation) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int ScratchDirectory::remove_stale(const fs::path& parent, std::string_view prefix) {
  int removed = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  const std::string start = std::string(prefix) + "-";
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(start) || !entry.is_directory(ec)) continue;
    const auto written = fs::last_write_time(entry.path(), ec);
    if (ec || now - written < kStaleAfter) continue;
    // Locked: its owner lives. Unlocked: we hold the lock while removing it.
    const int fd = open_locked(entry.path(), LOCK_EX | LOCK_NB);
    if (fd < 0) continue;
    if (fs::remove_all(entry.path(), ec) > 0 && !ec) ++removed;
    close(fd);
  }
  return removed;
}

ScratchDirectory::ScratchDirectory(const fs::path& parent, std::string_view prefix) {
  fs::create_directories(parent);
  remove_stale(parent, prefix);
  std::string pattern = (parent / (std::string(prefix) + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make " + pattern);
  path_ = pattern;
  lock_fd_ = open_locked(path_, LOCK_EX);
  if (lock_fd_ < 0) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    throw std::runtime_error("cannot lock " + path_.string());
  }
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ec;
  fs::remove_all(path_, ec);
  close(lock_fd_);
}

}  // namespace cused::host
