// The differences between cused and the kernel that docs/binderfs.md's deviation table
// documents, as the differential runner sees them: the first line where a script's traces part
// may be one of these and nothing else (docs/reliability.md, "Differential testing").
#pragma once

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

// The documented deviation that explains the kernel's `kernel` line becoming cused's `cused`
// line on `path`, if any; `before` are the lines both traces had up to there.
std::optional<Deviation> known_deviation(std::string_view path, const std::string& kernel,
                                         const std::string& cused,
                                         std::span<const std::string> before = {});

}  // namespace cused::diff
