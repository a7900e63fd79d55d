// The differences between cused and the kernel that docs/binderfs.md's deviation table
// documents, as the differential runner sees them (docs/reliability.md, "Differential
// testing"). Each rule reads both drivers' lines (trace_line.h) and matches its documented case
// only: the kernel's answer and cused's, their return values and bytes consumed, and the cause
// the deviation needs earlier in the script (the munmap, the fd-carrying command, the
// transaction dropped with its buffer).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cused::diff {

struct Deviation {
  std::string_view name;
  std::string_view path;  // "fuse", "run" or "any": where cused differs
  std::string_view why;   // docs/binderfs.md's row, in short
};

struct DeviationMatch {
  Deviation deviation;
  std::size_t kernel_lines = 1, cused_lines = 1;  // the lines it explains on each side
  bool rest_comparable = true;  // false: what follows differs because of it (not compared)
};

// The documented deviation that explains the kernel's line `k` differing from cused's line `c`
// on `path`, if any; the lines before them are the two traces' comparable past.
std::optional<DeviationMatch> known_deviation(std::string_view path,
                                              std::span<const std::string> kernel, std::size_t k,
                                              std::span<const std::string> cused, std::size_t c);

}  // namespace cused::diff
