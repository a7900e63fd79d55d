// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's label check (tools/ab/variant_check.h): a NAME:SPEC label holds only when each of
// its keys has that value in the device's real variant.
#include <gtest/gtest.h>

#include "tools/ab/variant_check.h"

namespace cused::tools::ab {
namespace {

constexpr const char* kDefault =
    "alloc_lock=mutex,pages=eager,lock_policy=barging,defer_complete=on,exec_context=caller,"
    "install_latency_us=0";

TEST(AbVariantCheck, KeysTheDeviceHasHold) {
  EXPECT_TRUE(spec_holds("alloc_lock=mutex", kDefault));
  EXPECT_TRUE(spec_holds("defer_complete=on,pages=eager", kDefault));
  EXPECT_TRUE(spec_holds("", kDefault));
}

// A key the label gives with another value than the device has is a mismatch; keys it does not
// give are not checked (the table's header prints the full variant for those).
TEST(AbVariantCheck, AKeyWithAnotherValueDoesNotHold) {
  EXPECT_FALSE(spec_holds("defer_complete=off", kDefault));
  EXPECT_FALSE(spec_holds("alloc_lock=mutex,pages=lazy", kDefault));
  EXPECT_FALSE(spec_holds("colour=blue", kDefault));
}

TEST(AbVariantCheck, APathWithNoCusedBesideItHasNoVariant) {
  EXPECT_EQ(read_device_variant("/nonexistent-cused-dir/binder"), std::nullopt);
  Variant path{.label = "/nonexistent-cused-dir/binder", .device = "/nonexistent-cused-dir/binder"};
  EXPECT_NO_THROW(check_label("A", path));  // nothing claimed, nothing to check
  Variant claimed{
      .label = "x:pages=lazy", .device = "/nonexistent-cused-dir/x", .spec = "pages=lazy"};
  EXPECT_THROW(check_label("B", claimed), std::runtime_error);
}

}  // namespace
}  // namespace cused::tools::ab
