// SPDX-License-Identifier: GPL-2.0-only
// A file's whole text and a directory's entry names, for tests that look at what a mount shows.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>

namespace cused::testing {

// What could be read: a /proc file whose process went meanwhile ends the text early (ESRCH),
// where reading through istreambuf_iterator would throw.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::set<std::string> list_dir(const std::string& path) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path))
    names.insert(entry.path().filename().string());
  return names;
}

}  // namespace cused::testing
