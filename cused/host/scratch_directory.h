// SPDX-License-Identifier: GPL-2.0-only
// A scratch folder in the kernel-design cache (docs/kernel-designs.md): a build's work folder, a
// patched tree's copy. Its owner holds an flock on it for its life and removes it at the end; a
// folder whose owner was killed (no lock held) is removed by the next owner that starts, so a
// killed `cused check-design` or daemon leaves nothing behind for long.
#pragma once

#include <filesystem>
#include <string_view>

namespace cused::host {

class ScratchDirectory {
 public:
  // Makes `parent/PREFIX-XXXXXX` (parent created if needed) and locks it, after removing the
  // unlocked `PREFIX-*` folders there that are older than a minute (their owners died: a live
  // owner locks its folder right after making it). Throws std::runtime_error when it cannot.
  ScratchDirectory(const std::filesystem::path& parent, std::string_view prefix);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Removes the stale `PREFIX-*` folders of `parent` (as the constructor does); returns how many.
  static int remove_stale(const std::filesystem::path& parent, std::string_view prefix);

 private:
  std::filesystem::path path_;
  int lock_fd_ = -1;
};

}  // namespace cused::host
