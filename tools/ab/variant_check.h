// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's check of each label against its device: the variant a NAME:SPEC label claims must be
// the one the device has, read from its cused (CUSED_CTL_GET_VARIANT on the mount's
// binder-control), or the table would print one variant's numbers under another's name.
#pragma once

#include <optional>
#include <string>

#include "tools/ab/workload.h"

namespace cused::tools::ab {

// The device's full variant ("alloc_lock=mutex,pages=eager,..."), or nullopt where no cused's
// binder-control sits beside it (the kernel's /dev/binder, a path elsewhere).
std::optional<std::string> read_device_variant(const std::string& device);

// Whether the keys of `spec` hold in `actual` (a full variant): applying them changes nothing.
bool spec_holds(const std::string& spec, const std::string& actual);

// Fills variant.actual from the device; throws std::runtime_error, naming `side` ("A", "B"), the
// label and the device's real variant, when the label's SPEC does not hold there (or cannot be
// checked because no cused serves the device).
void check_label(const char* side, Variant& variant);

}  // namespace cused::tools::ab
