// docs/design.md section 5, "variants, live": Device::set_options applies to procs opened
// afterwards; procs already open keep the variant they opened with, in what they report
// (Proc::options(), for stats and logs) and in what runs (their allocator's lock design and page
// table).
#include <gtest/gtest.h>

#include <variant>

#include "core/device_variant.h"
#include "tests/unit/core/harness.h"

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
  EXPECT_EQ(before.proc().allocator().variant().lock, alloc::LockVariant::mutex);
  EXPECT_EQ(before.proc().allocator().variant().pages, alloc::PageTableVariant::eager);

  EXPECT_EQ(to_string(after.proc().options()),
            "alloc_lock=spin-install,pages=lazy,lock_policy=handoff,defer_complete=off,exec_"
            "context=caller,install_latency_us=0");
  EXPECT_EQ(after.proc().allocator().variant().lock, alloc::LockVariant::spin_install);
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
  EXPECT_EQ(first.proc().allocator().variant().lock, alloc::LockVariant::mutex);
  EXPECT_EQ(second.proc().allocator().variant().lock, alloc::LockVariant::spin);
  EXPECT_EQ(third.proc().allocator().variant().lock, alloc::LockVariant::spin_install);
}

// A variant change keeps the device's label source (S4.9), which the text form does not carry.
TEST(LiveVariant, ChangeKeepsTheLabelSource) {
  Env env;
  auto labels = env.device->options().labels;
  ASSERT_TRUE(labels);
  env.device->set_options(variant("defer_complete=off", env.device->options()));
  EXPECT_EQ(env.device->options().labels, labels);
}

}  // namespace
}  // namespace cused::core::test
