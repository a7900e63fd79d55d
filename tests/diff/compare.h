// SPDX-License-Identifier: GPL-2.0-only
// cused's trace of a script against the kernel's, line by line (docs/reliability.md,
// "Differential testing"): the same, a documented deviation of docs/binderfs.md's table
// (deviations.h), or a divergence. A documented line does not end the comparison: it goes on to
// the end of both traces. Where a deviation's effect goes on (the transaction cused refused never
// reached its target), the later lines of the slots it affects are set aside on both sides and
// counted; every other line is still compared.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tests/diff/trace_line.h"

namespace cused::diff {

using Trace = std::vector<std::string>;

struct DocumentedLine {
  std::string deviation;
  std::string rule;      // the rule of deviations.cc that matched
  std::size_t line = 0;  // the kernel's line, from 1
  std::string kernel, cused;
};

struct Verdict {
  enum Kind { kSame, kDocumented, kDiverged } kind = kSame;
  std::vector<DocumentedLine> documented;  // in the order found
  // For kDiverged: the first line that differs and no deviation explains.
  std::size_t line = 0, cused_line = 0;  // the kernel's and cused's line, from 1
  std::string kernel, cused;
  std::size_t compared = 0;  // kernel lines compared (the same, or documented)
  // Lines set aside because a documented deviation's effect goes on in their slot, on each side.
  std::size_t not_compared = 0, cused_not_compared = 0;
};

Verdict compare(const Trace& kernel, const Trace& cused, const std::string& path);

// The same over traces already read into their parts (the mutation test reads each once).
Verdict compare_lines(std::span<const TraceLine* const> kernel,
                      std::span<const TraceLine* const> cused, const std::string& path);

// A trace read into its parts; `pointers` is what compare_lines takes.
struct ParsedTrace {
  std::vector<TraceLine> lines;
  std::vector<const TraceLine*> pointers;
  explicit ParsedTrace(const Trace& trace);
};

}  // namespace cused::diff
