// SPDX-License-Identifier: GPL-2.0-only
#include "tests/conformance/device_path.h"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace cused::conformance {

// The features directory sits beside the device node in a binderfs mount; /dev/binder may be a
// symlink into one (tests/vm/init).
bool DeviceHasFeature(const std::string& feature) {
  std::error_code error;
  std::filesystem::path device = std::filesystem::canonical(DevicePath(), error);
  if (error) return false;
  std::ifstream file(device.parent_path() / "features" / feature);
  std::string value;
  return file >> value && value == "1";
}

}  // namespace cused::conformance
