// lock_policy= reaches the allocator (issue 9, docs/locking.md): a proc's allocator mutex (the
// metadata lock of alloc_lock=mutex, the install lock of alloc_lock=spin-install) is built with the
// policy of the device variant the proc opened under; a later change of the variant applies to
// procs opened afterwards only (docs/design.md section 5). The engine's StressTest/* runs
// concurrent calls under every policy, through these allocator locks as well.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "core/device_variant.h"
#include "core/proc.h"
#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

DeviceOptions variant(const char* spec) {
  auto parsed = parse_device_variant(spec);
  EXPECT_TRUE(std::holds_alternative<DeviceOptions>(parsed)) << spec;
  auto* options = std::get_if<DeviceOptions>(&parsed);
  return options ? *options : DeviceOptions{};
}

class VariantLocksTest : public ::testing::TestWithParam<sync::LockPolicy> {};

TEST_P(VariantLocksTest, AllocatorMutexTakesTheDevicesLockPolicy) {
  DeviceOptions options = variant("alloc_lock=mutex");
  options.lock_policy = GetParam();
  Env env(options);
  Client client(env, 100);
  const alloc::Allocator& allocator = client.proc().allocator();
  EXPECT_EQ(allocator.lock_policy(), GetParam());
  EXPECT_EQ(allocator.metadata_lock_policy(), GetParam());
  EXPECT_EQ(allocator.install_lock_policy(), GetParam());
}

// The install lock of spin-install is the allocator's one mutex there; it follows the policy too.
TEST_P(VariantLocksTest, SpinInstallsInstallLockTakesTheDevicesLockPolicy) {
  DeviceOptions options = variant("alloc_lock=spin-install");
  options.lock_policy = GetParam();
  Env env(options);
  Client client(env, 100);
  EXPECT_EQ(client.proc().allocator().install_lock_policy(), GetParam());
}

TEST(VariantLocks, AChangedPolicyAppliesToProcsOpenedAfterwards) {
  Env env(variant("alloc_lock=mutex,lock_policy=handoff"));
  Client before(env, 100);
  env.device->set_options(variant("alloc_lock=mutex,lock_policy=steal"));
  Client after(env, 200);
  EXPECT_EQ(before.proc().allocator().metadata_lock_policy(), sync::LockPolicy::kHandoff);
  EXPECT_EQ(after.proc().allocator().metadata_lock_policy(), sync::LockPolicy::kSteal);
}

INSTANTIATE_TEST_SUITE_P(Policies, VariantLocksTest, ::testing::ValuesIn(sync::kLockPolicies),
                         [](const auto& info) { return policy_param_name(info.param); });

}  // namespace
}  // namespace cused::core::test
