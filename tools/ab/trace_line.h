// One line of a cused trace (docs/tracing.md), as ftrace's text prints it:
//   COMM-TID (TGID) [CPU] FLAGS SECONDS: EVENT: key=value key=value ...
// read back for binder-ab --trace's summary (lock_trace_summary.h). The fields are kept by name,
// so that an event that gains fields (a newer cused) still reads, and one that lacks them (an
// older one) reads as lacking them.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace cused::tools::ab {

struct TraceLine {
  std::string comm;
  int tid = 0;
  int tgid = 0;  // 0: the kernel did not record it ("-------")
  double seconds = 0;
  std::string event;
  std::map<std::string, std::string> fields;  // the key=value words after the event's name

  // The field as a number; nullopt when it is missing or not a number.
  std::optional<long long> number(const std::string& key) const;
  std::optional<std::string> text(const std::string& key) const;
};

// nullopt for a '#' comment, an empty line or anything that is not an event line.
std::optional<TraceLine> parse_trace_line(const std::string& line);

}  // namespace cused::tools::ab
