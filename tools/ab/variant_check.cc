// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/variant_check.h"

#include <errno.h>
#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>
#include <variant>

#include "core/device_variant.h"
#include "tools/programs/binderctl_control.h"

namespace cused::tools::ab {

std::optional<std::string> read_device_variant(const std::string& device) {
  std::filesystem::path path(device);
  binderctl::ControlFile control(path.parent_path().string());
  if (!control.ok()) return std::nullopt;
  auto variant = control.variant(path.filename().string());
  if (auto* spec = std::get_if<std::string>(&variant)) return *spec;
  return std::nullopt;
}

bool spec_holds(const std::string& spec, const std::string& actual) {
  auto base = core::parse_device_variant(actual);
  if (!std::holds_alternative<core::DeviceOptions>(base)) return false;
  const auto& options = std::get<core::DeviceOptions>(base);
  auto claimed = core::parse_device_variant(spec, options);
  return std::holds_alternative<core::DeviceOptions>(claimed) &&
         core::to_string(std::get<core::DeviceOptions>(claimed)) == core::to_string(options);
}

void check_label(const char* side, Variant& variant) {
  variant.actual = read_device_variant(variant.device).value_or("");
  if (variant.spec.empty()) return;
  if (variant.actual.empty())
    throw std::runtime_error(
        fmt::format("{} is labelled {}, but {} has no variant to check it against (no such "
                    "device, or no cused serves it); create it, or label it by its path",
                    side, variant.label, variant.device));
  if (!spec_holds(variant.spec, variant.actual))
    throw std::runtime_error(
        fmt::format("{} is labelled {}, but {} has {}; change it (binderctl set) or the label",
                    side, variant.label, variant.device, variant.actual));
}

}  // namespace cused::tools::ab
