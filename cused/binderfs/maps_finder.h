// SPDX-License-Identifier: GPL-2.0-only
// Finds the client's mapping of its buffer space in /proc/<pid>/maps. With FUSE passthrough the
// vma maps the backing memfd but /proc shows the FUSE file, so the line to look for is the one
// with the mount's device and the device node's inode (each open has an inode of its own).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>

#include "core/client_mapping.h"

namespace cused::binderfs {

class MapsFinder final : public core::MappingFinder {
 public:
  MapsFinder(pid_t pid, dev_t dev, ino_t ino) : pid_(pid), dev_(dev), ino_(ino) {}
  std::optional<core::ClientMapping> find() override;

 private:
  pid_t pid_;
  dev_t dev_;
  ino_t ino_;
};

// One line of /proc/<pid>/maps, parsed; nullopt for a malformed line. Exposed for tests.
struct MapsLine {
  std::uint64_t start, end, offset;
  bool readable, writable, shared;
  unsigned dev_major, dev_minor;
  std::uint64_t inode;
};
std::optional<MapsLine> parse_maps_line(std::string_view line);

}  // namespace cused::binderfs
