// SPDX-License-Identifier: GPL-2.0-only
// core/device.cc: a device's options. docs/design.md section 5, "variants, live":
// Device::set_options applies to procs opened
// afterwards; procs already open keep the variant they opened with, in what they report
// (Proc::options(), for stats and logs) and in what runs (their allocator's lock design and page
// table).
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "core/device_variant.h"
#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

DeviceOptions variant(std::string_view spec, DeviceOptions base = {}) {
  auto parsed = parse_device_variant(spec, base);
  EXPECT_TRUE(std::holds_alternative<DeviceOptions>(parsed)) << spec;
  return std::holds_alternative<DeviceOptions>(parsed) ? std::get<DeviceOptions>(parsed) : base;
}

TEST(LiveVariant, SetOptionsAppliesToProcsOpenedAfterwards) {
  Env env(
      variant("alloc_lock=mutex,pages=eager,lock_policy=barging,defer_complete=on,exec_context="
              "caller,install_latency_us=0"));
  Client before(env, 100);
  env.device->set_options(
      variant("alloc_lock=spin-install,pages=lazy,lock_policy=handoff,defer_complete=off,exec_"
              "context=caller,install_latency_us=0"));
  Client after(env, 200);

  EXPECT_EQ(to_string(before.proc().options()),
            "alloc_lock=mutex,pages=eager,lock_policy=barging,defer_complete=on,exec_context="
            "caller,install_latency_us=0");
  EXPECT_EQ(before.proc().allocator().variant().lock, alloc::LockVariant::named("mutex"));
  EXPECT_EQ(before.proc().allocator().variant().pages, alloc::PageTableVariant::eager);

  EXPECT_EQ(to_string(after.proc().options()),
            "alloc_lock=spin-install,pages=lazy,lock_policy=handoff,defer_complete=off,exec_"
            "context=caller,install_latency_us=0");
  EXPECT_EQ(after.proc().allocator().variant().lock, alloc::LockVariant::named("spin-install"));
  EXPECT_EQ(after.proc().allocator().variant().pages, alloc::PageTableVariant::lazy);
  EXPECT_EQ(to_string(env.device->options()), to_string(after.proc().options()));
}

// A second change does not reach the proc opened after the first: each proc keeps its generation.
TEST(LiveVariant, EachProcKeepsTheGenerationItOpenedWith) {
  Env env;
  Client first(env, 100);
  env.device->set_options(variant("alloc_lock=spin"));
  Client second(env, 200);
  env.device->set_options(variant("alloc_lock=spin-install"));
  Client third(env, 300);
  EXPECT_EQ(first.proc().allocator().variant().lock, alloc::LockVariant::named("mutex"));
  EXPECT_EQ(second.proc().allocator().variant().lock, alloc::LockVariant::named("spin"));
  EXPECT_EQ(third.proc().allocator().variant().lock, alloc::LockVariant::named("spin-install"));
}

// A variant change keeps the device's label source (S4.9), which the text form does not carry.
TEST(LiveVariant, ChangeKeepsTheLabelSource) {
  Env env;
  auto labels = env.device->options().labels;
  ASSERT_TRUE(labels);
  env.device->set_options(variant("defer_complete=off", env.device->options()));
  EXPECT_EQ(env.device->options().labels, labels);
}

// lock_policy= reaches the allocator (issue 9, docs/locking.md): a proc's allocator mutex (the
// metadata lock of alloc_lock=mutex, the install lock of alloc_lock=spin-install) is built with the
// policy of the device variant the proc opened under; a later change of the variant applies to
// procs opened afterwards only (docs/design.md section 5). The engine's StressTest/* runs
// concurrent calls under every policy, through these allocator locks as well.

class VariantLocksTest : public ::testing::TestWithParam<sync::LockPolicy> {};

TEST_P(VariantLocksTest, AllocatorMutexTakesTheDevicesLockPolicy) {
  DeviceOptions options = variant("alloc_lock=mutex");
  options.lock_policy = GetParam();
  Env env(options);
  Client client(env, 100);
  const alloc::Allocator& allocator = client.proc().allocator();
  EXPECT_EQ(allocator.sleeping_lock_policy(), GetParam());
}

// The install lock of spin-install is the allocator's one mutex there; it follows the policy too.
TEST_P(VariantLocksTest, SpinInstallsInstallLockTakesTheDevicesLockPolicy) {
  DeviceOptions options = variant("alloc_lock=spin-install");
  options.lock_policy = GetParam();
  Env env(options);
  Client client(env, 100);
  EXPECT_EQ(client.proc().allocator().sleeping_lock_policy(), GetParam());
}

TEST(VariantLocks, AChangedPolicyAppliesToProcsOpenedAfterwards) {
  Env env(variant("alloc_lock=mutex,lock_policy=handoff"));
  Client before(env, 100);
  env.device->set_options(variant("alloc_lock=mutex,lock_policy=steal"));
  Client after(env, 200);
  EXPECT_EQ(before.proc().allocator().sleeping_lock_policy(), sync::LockPolicy::kHandoff);
  EXPECT_EQ(after.proc().allocator().sleeping_lock_policy(), sync::LockPolicy::kSteal);
}

INSTANTIATE_TEST_SUITE_P(Policies, VariantLocksTest, ::testing::ValuesIn(sync::kLockPolicies),
                         [](const auto& info) { return policy_param_name(info.param); });

using LiveVariantTest = World;

// docs/design.md section 5: a changed device variant applies to procs opened afterwards only.
TEST_F(LiveVariantTest, OptionChangeAppliesToLaterProcs_TF_DEFER_COMPLETE) {
  env.device->set_options(DeviceOptions{{}, /*defer_complete=*/false, nullptr});
  EXPECT_FALSE(env.device->options().defer_complete);
  auto serve_once = [&](Client& server, pid_t tid) {
    Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
    binder_transaction_data tr = read_now(server, tid).tr();
    Call served = server.write_read(
        tid, Commands().free_buffer(tr.data.ptr.buffer).reply(uapi::TF_DEFER_COMPLETE));
    write_ok(client, kClientMain, Commands().free_buffer(call.tr().data.ptr.buffer));
    return served.done();
  };
  EXPECT_FALSE(serve_once(sm, kSmLooper)) << "the manager opened before keeps deferring";
  sm.release();
  Client later{env, 400};
  ASSERT_EQ(later.ioctl(401, BINDER_SET_CONTEXT_MGR), 0);
  warm(later, 401);
  EXPECT_TRUE(serve_once(later, 401)) << "a proc opened after the change does not";
}

}  // namespace
}  // namespace cused::core::test
