// SPDX-License-Identifier: GPL-2.0-only
// The device under test (argv[1] of the conformance binary), for test files other than
// conformance_test.cc, and where its binderfs features/ directory is (S10.5).
#pragma once

#include <string>

namespace cused::conformance {

const std::string& DevicePath();
// True when the device's binderfs advertises `feature` (features/<feature> reads "1"). A device
// that is not in a binderfs (a misc /dev/binder) advertises nothing.
bool DeviceHasFeature(const std::string& feature);

}  // namespace cused::conformance
