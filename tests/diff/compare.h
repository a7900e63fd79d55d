// cused's trace of a script against the kernel's, line by line (docs/reliability.md,
// "Differential testing"): the same, a documented deviation of docs/binderfs.md's table
// (deviations.h), or a divergence. A documented line does not end the comparison: it goes on
// where the deviation leaves the two traces (a line the kernel has and cused has not, say), and
// stops only where the deviation's effects make the rest incomparable, counting what it skipped.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cused::diff {

using Trace = std::vector<std::string>;

struct DocumentedLine {
  std::string deviation;
  std::size_t line = 0;  // the kernel's line, from 1
  std::string kernel, cused;
};

struct Verdict {
  enum Kind { kSame, kDocumented, kDiverged } kind = kSame;
  std::vector<DocumentedLine> documented;  // in the order found
  // For kDiverged: the first line that differs and no deviation explains.
  std::size_t line = 0, cused_line = 0;  // the kernel's and cused's line, from 1
  std::string kernel, cused;
  std::size_t compared = 0;      // kernel lines compared (the same, or documented)
  std::size_t not_compared = 0;  // kernel lines after a deviation whose effects go on
};

Verdict compare(const Trace& kernel, const Trace& cused, const std::string& path);

}  // namespace cused::diff
