// SPDX-License-Identifier: GPL-2.0-only
// `--link DIR`: symlinks such as /dev/binder -> MOUNT/binder for clients that hard-code the
// path. A real character device (or anything else that is not our link) is never replaced, and
// only the links made here are removed at exit.
#pragma once

#include <string>
#include <vector>

namespace cused {

class DeviceLinks {
 public:
  DeviceLinks(const std::string& link_dir, const std::string& mountpoint,
              const std::vector<std::string>& names);
  ~DeviceLinks();
  DeviceLinks(const DeviceLinks&) = delete;
  DeviceLinks& operator=(const DeviceLinks&) = delete;

  const std::vector<std::string>& made() const { return made_; }

 private:
  struct Link {
    std::string path, target;
  };
  std::vector<Link> links_;
  std::vector<std::string> made_;
};

}  // namespace cused
