// SPDX-License-Identifier: GPL-2.0-only
// The text form of a device's variant (docs/design.md section 5): what `cused --device NAME:SPEC`,
// binder-control and binderctl accept and what stats and logs print. alloc_lock= takes the names
// of core/alloc/designs/registry.cc.
//
//   alloc_lock=<a registered design: mutex|spin|...>,pages=eager|lazy,
//   lock_policy=barging|spin-then-park|handoff|steal|steal-window,defer_complete=on|off
//
// Any subset of the keys, in any order; keys not given keep the base variant's value.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/device_options.h"

namespace cused::core {

// Why a variant spec was refused, for the user: names the bad key or value and the valid ones.
struct VariantSpecError {
  std::string message;
};

// `base` with the keys of `spec` applied; an empty spec is `base` itself.
std::variant<DeviceOptions, VariantSpecError> parse_device_variant(std::string_view spec,
                                                                   DeviceOptions base = {});
// The same for callers that only report a bad spec: `report` gets the message, the result is
// empty.
std::optional<DeviceOptions> parse_device_variant(
    std::string_view spec, const DeviceOptions& base,
    const std::function<void(const std::string& message)>& report);

// Every key, in the order above: "alloc_lock=mutex,pages=eager,lock_policy=barging,
// defer_complete=on". parse_device_variant(to_string(o)) gives o back (labels aside).
std::string to_string(const DeviceOptions& options);

// "NAME" or "NAME:SPEC" split at the first ':' (binderfs device names cannot hold one in cused).
struct DeviceSpec {
  std::string name;
  std::string variant;
};
DeviceSpec split_device_spec(std::string_view text);

}  // namespace cused::core
