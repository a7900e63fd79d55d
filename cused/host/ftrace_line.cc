// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/ftrace_line.h"

#include <charconv>
#include <regex>
#include <sstream>

namespace cused::host {

std::optional<long long> FtraceLine::number(const std::string& key) const {
  auto found = fields.find(key);
  if (found == fields.end()) return std::nullopt;
  const std::string& value = found->second;
  long long result = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (error != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return result;
}

std::optional<std::string> FtraceLine::field(const std::string& key) const {
  auto found = fields.find(key);
  if (found == fields.end()) return std::nullopt;
  return found->second;
}

std::optional<FtraceLine> parse_ftrace_line(std::string_view line) {
  // kernel/trace/trace_output.c's layout. The comm may hold spaces and dashes: the last "-TID"
  // before the tgid column or the CPU ends it.
  static const std::regex kLine(
      R"(^\s*(.*)-(\d+)\s+(?:\(\s*(\d+|-+)\)\s+)?\[\d+\]\s+\S+\s+(\d+\.\d+):\s+(\w+):\s?(.*)$)");
  std::match_results<std::string_view::const_iterator> match;
  if (line.empty() || line.front() == '#' ||
      !std::regex_match(line.begin(), line.end(), match, kLine))
    return std::nullopt;
  FtraceLine out;
  out.comm = match[1].str();
  out.tid = static_cast<pid_t>(std::stol(match[2].str()));
  if (match[3].matched && match[3].str()[0] != '-')
    out.tgid = static_cast<pid_t>(std::stol(match[3].str()));
  out.seconds = std::stod(match[4].str());
  out.event = match[5].str();
  out.text = match[6].str();
  std::istringstream words(out.text);
  for (std::string word; words >> word;)
    if (auto equals = word.find('='); equals != std::string::npos && equals > 0)
      out.fields[word.substr(0, equals)] = word.substr(equals + 1);
  return out;
}

}  // namespace cused::host
