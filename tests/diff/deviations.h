// SPDX-License-Identifier: GPL-2.0-only
// The differences between cused and the kernel that docs/binderfs.md's deviation table
// documents, as the differential runner sees them (docs/reliability.md, "Differential
// testing"). Each rule reads both drivers' lines (trace_line.h) and matches its documented case
// only, stated as data it checks: the kernel line's command, return value, bytes and extended
// error, cused's, and the cause the deviation needs earlier in the script (the munmap, the
// fd-carrying command, the very buffer of the dropped transaction). What a rule cannot pin from
// a trace is listed in docs/reliability.md with the reason.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tests/diff/trace_line.h"

namespace cused::diff {

struct Deviation {
  std::string_view name;
  std::string_view path;  // "fuse", "run" or "any": where cused differs
  std::string_view why;   // docs/binderfs.md's row, in short
};

struct DeviationMatch {
  Deviation deviation;
  std::string_view rule;                          // the rule that matched (deviations.cc)
  std::size_t kernel_lines = 1, cused_lines = 1;  // the lines it explains on each side
  // The slots whose later lines the deviation goes on to change, as the rule defines its
  // effect (the transaction cused refused never reached its target, the caller holds the reply
  // cused delivered): their later lines are set aside on both sides and counted, everything
  // else is still compared to the end.
  std::vector<std::string> affected_slots;
};

// Both traces read into their parts once (compare.cc); the rules look only at these.
using Lines = std::span<const TraceLine* const>;

// The documented deviation that explains the kernel's line `k` differing from cused's line `c`
// on `path`, if any; the lines before them are the two traces' comparable past.
std::optional<DeviationMatch> known_deviation(std::string_view path, Lines kernel, std::size_t k,
                                              Lines cused, std::size_t c);

// The rules' names, in the order they are tried (the mutation test lists what each accepts).
std::vector<std::string_view> deviation_rules();

}  // namespace cused::diff
