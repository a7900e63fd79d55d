// SPDX-License-Identifier: GPL-2.0-only
#include "core/device_variant.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "core/alloc/designs/registry.h"

namespace cused::core {
namespace {

std::optional<bool> parse_on_off(std::string_view text) {
  if (text == "on") return true;
  if (text == "off") return false;
  return std::nullopt;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  return text;
}

// Applies one key=value to `options`; the error message names what was wrong.
std::optional<VariantSpecError> apply_setting(std::string_view key, std::string_view value,
                                              DeviceOptions& options) {
  auto bad_value = [&](std::string_view valid) {
    return VariantSpecError{fmt::format("bad {}={}: expected one of {}", key, value, valid)};
  };
  if (key == "alloc_lock") {
    auto lock = alloc::parse_lock_variant(value);
    // A kernel design that could not be built or loaded: say why (the compiler's words).
    if (!lock && value.starts_with("kernel:"))
      return VariantSpecError{
          fmt::format("bad {}={}: {}", key, value, alloc::last_resolve_error())};
    if (!lock) return bad_value(alloc::lock_variant_names());
    options.alloc.lock = *lock;
  } else if (key == "pages") {
    auto pages = alloc::parse_page_table_variant(value);
    if (!pages) return bad_value("eager|lazy");
    options.alloc.pages = *pages;
  } else if (key == "lock_policy") {
    auto policy = sync::parse_lock_policy(value);
    if (!policy) return bad_value(sync::lock_policy_names());
    options.lock_policy = *policy;
  } else if (key == "defer_complete") {
    auto on = parse_on_off(value);
    if (!on) return bad_value("on|off");
    options.defer_complete = *on;
  } else if (key == "install_latency_us") {
    unsigned long microseconds = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), microseconds);
    if (error != std::errc() || end != value.data() + value.size() || microseconds > 1000000)
      return bad_value("0..1000000");
    options.install_latency = std::chrono::microseconds(microseconds);
  } else if (key == "exec_context") {
    if (value == "caller")
      options.exec_context = DeviceOptions::ExecContext::kCaller;
    else if (value == "daemon")
      options.exec_context = DeviceOptions::ExecContext::kDaemon;
    else
      return bad_value("caller|daemon");
  } else if (key == "priority") {
    if (value == "mainline")
      options.priority = DeviceOptions::Priority::kMainline;
    else if (value == "android")
      options.priority = DeviceOptions::Priority::kAndroid;
    else
      return bad_value("mainline|android");
  } else {
    return VariantSpecError{fmt::format(
        "unknown variant key '{}': expected alloc_lock, pages, lock_policy, defer_complete, "
        "exec_context, install_latency_us or priority",
        key)};
  }
  return std::nullopt;
}

}  // namespace

std::variant<DeviceOptions, VariantSpecError> parse_device_variant(std::string_view spec,
                                                                   DeviceOptions base) {
  spec = trim(spec);
  while (!spec.empty()) {
    std::string_view setting = spec.substr(0, spec.find(','));
    spec.remove_prefix(std::min(spec.size(), setting.size() + 1));
    setting = trim(setting);
    auto equals = setting.find('=');
    if (equals == std::string_view::npos)
      return VariantSpecError{fmt::format("'{}' is not key=value", setting)};
    if (auto error = apply_setting(setting.substr(0, equals), setting.substr(equals + 1), base))
      return *error;
  }
  return base;
}

std::optional<DeviceOptions> parse_device_variant(
    std::string_view spec, const DeviceOptions& base,
    const std::function<void(const std::string& message)>& report) {
  auto parsed = parse_device_variant(spec, base);
  if (auto* error = std::get_if<VariantSpecError>(&parsed)) {
    report(error->message);
    return std::nullopt;
  }
  return std::get<DeviceOptions>(std::move(parsed));
}

// priority= is printed only when it is not mainline's: a device without it behaves as mainline
// Linux, and every variant printed before the key existed still reads back as itself.
std::string to_string(const DeviceOptions& options) {
  return fmt::format(
      "{},lock_policy={},defer_complete={},exec_context={},install_latency_us={}{}",
      alloc::to_string(options.alloc), sync::to_string(options.lock_policy),
      options.defer_complete ? "on" : "off",
      options.exec_context == DeviceOptions::ExecContext::kCaller ? "caller" : "daemon",
      options.install_latency.count(),
      options.priority == DeviceOptions::Priority::kAndroid ? ",priority=android" : "");
}

DeviceSpec split_device_spec(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return {std::string(text), {}};
  return {std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

}  // namespace cused::core
