// SPDX-License-Identifier: GPL-2.0-only
#include "cused/binderfs/maps_finder.h"

#include <sys/sysmacros.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>

namespace cused::binderfs {

std::optional<MapsLine> parse_maps_line(std::string_view line) {
  MapsLine out{};
  char perms[5] = {};
  std::string copy(line);  // sscanf needs a terminated string
  int n = std::sscanf(copy.c_str(), "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64,
                      &out.start, &out.end, perms, &out.offset, &out.dev_major, &out.dev_minor,
                      &out.inode);
  if (n != 7) return std::nullopt;
  out.readable = perms[0] == 'r';
  out.writable = perms[1] == 'w';
  out.shared = perms[3] == 's';
  return out;
}

std::optional<core::ClientMapping> MapsFinder::find() {
  std::ifstream maps("/proc/" + std::to_string(pid_) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto entry = parse_maps_line(line);
    if (!entry || entry->inode != ino_ || entry->offset != 0) continue;
    if (makedev(entry->dev_major, entry->dev_minor) != dev_) continue;
    return core::ClientMapping{entry->start, entry->end - entry->start, entry->writable};
  }
  return std::nullopt;
}

}  // namespace cused::binderfs
