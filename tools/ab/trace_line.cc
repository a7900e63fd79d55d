#include "tools/ab/trace_line.h"

#include <charconv>
#include <regex>
#include <sstream>

namespace cused::tools::ab {

std::optional<long long> TraceLine::number(const std::string& key) const {
  auto found = fields.find(key);
  if (found == fields.end()) return std::nullopt;
  const std::string& value = found->second;
  long long result = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (error != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return result;
}

std::optional<std::string> TraceLine::text(const std::string& key) const {
  auto found = fields.find(key);
  if (found == fields.end()) return std::nullopt;
  return found->second;
}

std::optional<TraceLine> parse_trace_line(const std::string& line) {
  // The comm may hold spaces and dashes: the last "-TID" before " (TGID)" ends it.
  static const std::regex kLine(
      R"(^\s*(.*)-(\d+)\s+\(\s*(\d+|-+)\)\s+\[\d+\]\s+\S+\s+(\d+\.\d+):\s+(\w+):\s?(.*)$)");
  std::smatch match;
  if (!std::regex_match(line, match, kLine)) return std::nullopt;
  TraceLine out;
  out.comm = match[1].str();
  out.tid = std::stoi(match[2].str());
  out.tgid = match[3].str()[0] == '-' ? 0 : std::stoi(match[3].str());
  out.seconds = std::stod(match[4].str());
  out.event = match[5].str();
  std::istringstream words(match[6].str());
  for (std::string word; words >> word;)
    if (auto equals = word.find('='); equals != std::string::npos && equals > 0)
      out.fields[word.substr(0, equals)] = word.substr(equals + 1);
  return out;
}

}  // namespace cused::tools::ab
