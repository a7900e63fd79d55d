// SPDX-License-Identifier: GPL-2.0-only
// Reading binder_logs text (S10.6) back in tests: the block of one proc and the numbers in it.
#pragma once

#include <sys/types.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace cused::testing {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of every "proc <pid>" block of `text` (a block ends where the next proc starts).
inline std::vector<std::string> proc_block(const std::string& text, pid_t pid) {
  std::vector<std::string> block;
  bool inside = false;
  for (const auto& line : lines_of(text)) {
    if (line.rfind("proc ", 0) == 0) inside = line == "proc " + std::to_string(pid);
    if (inside) block.push_back(line);
  }
  return block;
}

// The number after `key` on the first line that starts with it; -1 when no line does.
inline long value_of(const std::vector<std::string>& block, const std::string& key) {
  for (const auto& line : block)
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  return -1;
}

// The lines of `block` that match `pattern` in full: each as the line and its capture groups.
inline std::vector<std::vector<std::string>> matching(const std::vector<std::string>& block,
                                                      const std::string& pattern) {
  std::regex re(pattern);
  std::vector<std::vector<std::string>> found;
  for (const auto& line : block) {
    std::smatch m;
    if (std::regex_match(line, m, re)) found.emplace_back(m.begin(), m.end());
  }
  return found;
}

}  // namespace cused::testing
