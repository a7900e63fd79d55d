// SPDX-License-Identifier: GPL-2.0-only
// The differences between cused's binder trace events and the kernel's that docs/tracing.md
// documents ("Where cused differs"), as the event comparison sees them (event_compare.h): each
// rule reads one task's normalised events on both sides and matches its documented case only.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cused::diff {

struct EventDeviationMatch {
  std::string_view name;
  std::size_t kernel_events = 0, cused_events = 0;  // the events it explains on each side
};

// The documented deviation that explains one task's kernel event `k` differing from its cused
// event `c`, if any.
std::optional<EventDeviationMatch> known_event_deviation(std::span<const std::string> kernel,
                                                         std::size_t k,
                                                         std::span<const std::string> cused,
                                                         std::size_t c);

}  // namespace cused::diff
