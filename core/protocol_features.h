// The files of binderfs's features/ directory (S10.5): each names a protocol feature this driver
// implements, and userspace (libbinder) probes them before using it. List only what core really
// does.
#pragma once

#include <span>
#include <string_view>

namespace cused::core {

inline std::span<const std::string_view> features() {
  static constexpr std::string_view kNone[] = {""};
  return std::span(kNone).first(0);  // the protocol engine adds its features here
}

}  // namespace cused::core
