// SPDX-License-Identifier: GPL-2.0-only
#include "cused/proc_status.h"

#include <fmt/format.h>

#include <fstream>
#include <string>

namespace cused {

bool read_proc_status(
    pid_t tid, const std::function<void(std::string_view name, std::string_view value)>& field) {
  std::ifstream status(fmt::format("/proc/{}/status", tid));
  if (!status) return false;
  std::string line;
  while (std::getline(status, line)) {
    std::string_view text(line);
    auto colon = text.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = text.substr(colon + 1);
    value.remove_prefix(std::min(value.size(), value.find_first_not_of(" \t")));
    field(text.substr(0, colon), value);
  }
  return true;
}

}  // namespace cused
