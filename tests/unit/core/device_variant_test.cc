// SPDX-License-Identifier: GPL-2.0-only
// The variant spec of docs/design.md section 5 (`--device NAME:SPEC`, binder-control, binderctl).
#include "core/device_variant.h"

#include <gtest/gtest.h>

namespace cused::core {
namespace {

DeviceOptions parsed(std::string_view spec, DeviceOptions base = {}) {
  auto result = parse_device_variant(spec, base);
  if (auto* error = std::get_if<VariantSpecError>(&result)) ADD_FAILURE() << error->message;
  return std::get_if<DeviceOptions>(&result) ? std::get<DeviceOptions>(result) : base;
}

std::string error_of(std::string_view spec) {
  auto result = parse_device_variant(spec);
  auto* error = std::get_if<VariantSpecError>(&result);
  return error ? error->message : "(accepted)";
}

TEST(DeviceVariant, EveryKeySetsItsField) {
  DeviceOptions options = parsed(
      "alloc_lock=spin-install,pages=lazy,lock_policy=handoff,defer_complete=off,exec_context="
      "caller,install_latency_us=0");
  EXPECT_EQ(options.alloc.lock, alloc::LockVariant::named("spin-install"));
  EXPECT_EQ(options.alloc.pages, alloc::PageTableVariant::lazy);
  EXPECT_EQ(options.lock_policy, sync::LockPolicy::kHandoff);
  EXPECT_FALSE(options.defer_complete);
}

TEST(DeviceVariant, KeysNotGivenKeepTheBase) {
  DeviceOptions base;
  base.alloc.lock = alloc::LockVariant::named("spin");
  base.defer_complete = false;
  DeviceOptions options = parsed("pages=lazy", base);
  EXPECT_EQ(options.alloc.lock, alloc::LockVariant::named("spin"));
  EXPECT_EQ(options.alloc.pages, alloc::PageTableVariant::lazy);
  EXPECT_FALSE(options.defer_complete);
}

// The form the daemon uses for --device and binder-control: the message goes to its log.
TEST(DeviceVariant, ReportingFormHandsOverTheMessageOfABadSpec) {
  std::vector<std::string> reported;
  auto report = [&](const std::string& message) { reported.push_back(message); };
  DeviceOptions base;
  base.defer_complete = false;
  auto good = parse_device_variant("pages=lazy", base, report);
  ASSERT_TRUE(good);
  EXPECT_EQ(good->alloc.pages, alloc::PageTableVariant::lazy);
  EXPECT_FALSE(good->defer_complete);
  EXPECT_TRUE(reported.empty());
  EXPECT_FALSE(parse_device_variant("pages=sideways", base, report));
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0], error_of("pages=sideways"));
}

TEST(DeviceVariant, PrintedFormParsesBack) {
  DeviceOptions options = parsed("alloc_lock=spin,lock_policy=steal");
  EXPECT_EQ(to_string(options),
            "alloc_lock=spin,pages=eager,lock_policy=steal,defer_complete=on,exec_context=caller,"
            "install_latency_us=0");
  DeviceOptions again = parsed(to_string(options));
  EXPECT_EQ(again.alloc, options.alloc);
  EXPECT_EQ(again.lock_policy, options.lock_policy);
  EXPECT_EQ(again.defer_complete, options.defer_complete);
}

TEST(DeviceVariant, BadInputNamesTheProblem) {
  EXPECT_NE(error_of("alloc_lock=rwlock").find(alloc::lock_variant_names()), std::string::npos);
  EXPECT_NE(error_of("colour=blue").find("unknown variant key 'colour'"), std::string::npos);
  EXPECT_NE(error_of("pages").find("not key=value"), std::string::npos);
  EXPECT_NE(error_of("defer_complete=yes").find("on|off"), std::string::npos);
}

TEST(DeviceVariant, DeviceSpecSplitsAtTheFirstColon) {
  DeviceSpec plain = split_device_spec("hwbinder");
  EXPECT_EQ(plain.name, "hwbinder");
  EXPECT_EQ(plain.variant, "");
  DeviceSpec with = split_device_spec("fast:alloc_lock=spin,pages=lazy");
  EXPECT_EQ(with.name, "fast");
  EXPECT_EQ(with.variant, "alloc_lock=spin,pages=lazy");
}

}  // namespace
// install_latency_us= (docs/variants.md): microseconds per installed page, bounded.
TEST(DeviceVariant, InstallLatencyIsMicrosecondsUpToOneSecond) {
  EXPECT_EQ(parsed("install_latency_us=250").install_latency, std::chrono::microseconds(250));
  EXPECT_EQ(error_of("install_latency_us=fast"),
            "bad install_latency_us=fast: expected one of 0..1000000");
  EXPECT_EQ(error_of("install_latency_us=1000001"),
            "bad install_latency_us=1000001: expected one of 0..1000000");
}

}  // namespace cused::core
