// SPDX-License-Identifier: GPL-2.0-only
#include "client/cused_mounts.h"

#include <fstream>
#include <sstream>

namespace cused::client {

namespace {

// /proc/mounts writes space, tab, newline and backslash in paths as octal escapes (\040).
std::string unescape_mount_field(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    bool octal = field[i] == '\\' && i + 3 < field.size() &&
                 field.find_first_not_of("01234567", i + 1) >= i + 4;
    if (octal) {
      out.push_back(static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> find_cused_mounts(const std::string& mounts_file) {
  std::ifstream mounts(mounts_file);
  std::vector<std::string> found;
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    std::string source, target, type;
    if (!(fields >> source >> target >> type)) continue;
    // cused mounts with fsname=cused,subtype=binder: "cused DIR fuse.binder ...".
    if (source == "cused" && type.rfind("fuse", 0) == 0)
      found.push_back(unescape_mount_field(target));
  }
  return found;
}

}  // namespace cused::client
