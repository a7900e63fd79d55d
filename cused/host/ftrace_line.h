// SPDX-License-Identifier: GPL-2.0-only
// The reader of ftrace_text.h's lines: one line of tracefs's `trace` text, the kernel's or cused's
// (docs/tracing.md),
//   COMM-TID (TGID) [CPU] FLAGS SECONDS: EVENT: TEXT
// with or without the tgid column (options/record-tgid) and with four or five latency flags. For
// the programs that read traces back: binder-ab --trace's lock summary (tools/ab) and the
// differential tests' event comparison (tests/diff/event_lines.h). The fields are kept by name,
// so that an event that gains fields (a newer cused) still reads, and one that lacks them (an
// older one) reads as lacking them.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cused::host {

struct FtraceLine {
  std::string comm;
  pid_t tid = 0;
  pid_t tgid = 0;  // 0: not recorded ("-------", or no tgid column)
  double seconds = 0;
  std::string event;                          // "binder_transaction"
  std::string text;                           // all after "EVENT: ", as printed
  std::map<std::string, std::string> fields;  // the key=value words of `text`

  // The field as a number; nullopt when it is missing or not a number.
  std::optional<long long> number(const std::string& key) const;
  std::optional<std::string> field(const std::string& key) const;
};

// nullopt for a '#' comment, an empty line or anything that is not an event line.
std::optional<FtraceLine> parse_ftrace_line(std::string_view line);

}  // namespace cused::host
