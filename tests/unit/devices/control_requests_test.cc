// SPDX-License-Identifier: GPL-2.0-only
// cused's control ioctls served from the registry (cused/devices/control_requests.h), as
// binder-control and a CUSE node both answer them: uapi/cused.h's errnos, the variant text out,
// and a CUSE device's variant changed live like a binderfs one's.
#include "cused/devices/control_requests.h"

#include <gtest/gtest.h>
#include <linux/android/binderfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <string>

#include "core/device_variant.h"
#include "core/driver.h"
#include "cused/host/thread_timer.h"
#include "uapi/binder.h"
#include "uapi/cused.h"

namespace cused::devices {
namespace {

constexpr uid_t kOtherUser = 4321;  // neither root nor the test's own user

template <typename T>
std::span<const std::byte> bytes_of(const T& argument) {
  return std::as_bytes(std::span(&argument, 1));
}

template <typename T>
T answer_as(const ControlAnswer& answer) {
  T result{};
  EXPECT_EQ(answer.out.size(), sizeof result);
  std::memcpy(&result, answer.out.data(), std::min(answer.out.size(), sizeof result));
  return result;
}

uapi::cused_device_variant variant_argument(const std::string& name, const std::string& spec) {
  uapi::cused_device_variant argument{};
  std::strncpy(argument.name, name.c_str(), sizeof argument.name - 1);
  std::strncpy(argument.spec, spec.c_str(), sizeof argument.spec - 1);
  return argument;
}

class ControlRequestsTest : public ::testing::Test {
 protected:
  ControlRequestsTest() {
    core::Driver::shared_default()->set_timer(host::ThreadTimer::shared());
    EXPECT_EQ(registry_.add_device("binder", {}, Frontend::kBinderfs).error, 0);
    EXPECT_EQ(registry_.add_device("binder-cuse", {}, Frontend::kCuse).error, 0);
  }
  template <typename T>
  ControlAnswer serve(unsigned cmd, const T& argument, uid_t uid = 0) {
    return serve_control(registry_, {cmd, bytes_of(argument), uid, "test"});
  }

  DeviceRegistry registry_;
};

TEST_F(ControlRequestsTest, OnlyCusedsOwnCommandsAreControlIoctls) {
  EXPECT_TRUE(is_control_ioctl(uapi::CUSED_CTL_GET_VARIANT));
  EXPECT_TRUE(is_control_ioctl(uapi::CUSED_CTL_SET_VARIANT));
  EXPECT_TRUE(is_control_ioctl(uapi::CUSED_CTL_SHRINK));
  EXPECT_TRUE(is_control_ioctl(uapi::CUSED_CTL_TRACE));
  EXPECT_FALSE(is_control_ioctl(BINDER_CTL_ADD));
  EXPECT_FALSE(is_control_ioctl(BINDER_WRITE_READ));
  EXPECT_FALSE(is_control_ioctl(BINDER_VERSION));
}

TEST_F(ControlRequestsTest, SetVariantOfACuseDeviceAnswersTheWholeVariantAndGetReadsItBack) {
  ControlAnswer set =
      serve(uapi::CUSED_CTL_SET_VARIANT, variant_argument("binder-cuse", "alloc_lock=spin"));
  ASSERT_EQ(set.error, 0);
  const std::string expected =
      core::to_string(std::get<core::DeviceOptions>(core::parse_device_variant("alloc_lock=spin")));
  EXPECT_EQ(answer_as<uapi::cused_device_variant>(set).spec, expected);
  ControlAnswer get = serve(uapi::CUSED_CTL_GET_VARIANT, variant_argument("binder-cuse", ""));
  ASSERT_EQ(get.error, 0);
  EXPECT_EQ(answer_as<uapi::cused_device_variant>(get).spec, expected);
  EXPECT_EQ(core::to_string(registry_.device("binder")->options()),
            core::to_string(core::DeviceOptions{}))
      << "the other device keeps its variant";
}

TEST_F(ControlRequestsTest, UnknownDeviceIsENOENTBadSpecEINVALShortArgumentEFAULT) {
  EXPECT_EQ(serve(uapi::CUSED_CTL_GET_VARIANT, variant_argument("nosuch", "")).error, ENOENT);
  EXPECT_EQ(serve(uapi::CUSED_CTL_SET_VARIANT, variant_argument("nosuch", "pages=lazy")).error,
            ENOENT);
  EXPECT_EQ(serve(uapi::CUSED_CTL_SET_VARIANT, variant_argument("binder", "pages=sometimes")).error,
            EINVAL);
  std::uint64_t too_short = 0;
  EXPECT_EQ(serve(uapi::CUSED_CTL_SET_VARIANT, too_short).error, EFAULT);
  EXPECT_EQ(serve(uapi::CUSED_CTL_TRACE, too_short).error, ENOTTY) << "no trace: nothing to read";
}

// S10.3: binder-control answers EINVAL to a command it does not know.
TEST_F(ControlRequestsTest, S10_3_AnotherCommandIsEINVAL) {
  std::uint64_t argument = 0;
  EXPECT_EQ(serve(_IOWR(uapi::kCusedIoctlMagic, 99, std::uint64_t), argument).error, EINVAL);
}

TEST_F(ControlRequestsTest, ShrinkIsENOTTYWithoutAShrinkerAndItsResultWithOne) {
  EXPECT_EQ(serve_control(registry_, {uapi::CUSED_CTL_SHRINK, {}, 0, "test"}).error, ENOTTY);
  DeviceRegistry with_shrinker({.shrink_now = [] {
    return core::alloc::ReclaimResult{2, 8192, 5};
  }});
  ControlAnswer answer = serve_control(with_shrinker, {uapi::CUSED_CTL_SHRINK, {}, 0, "test"});
  ASSERT_EQ(answer.error, 0);
  auto result = answer_as<uapi::cused_shrink_result>(answer);
  EXPECT_EQ(result.pages, 2u);
  EXPECT_EQ(result.bytes, 8192u);
  EXPECT_EQ(result.skipped, 5u);
}

TEST_F(ControlRequestsTest, TraceIsRefusedToOtherUsersAndNeedsAnAbsolutePath) {
  host::TraceRecorder recorder(64);
  DeviceRegistry with_trace({.trace = &recorder});
  uapi::cused_trace start{};
  start.start = 1;
  std::strcpy(start.path, "/tmp/cused-control-requests-test.trace");
  EXPECT_EQ(
      serve_control(with_trace, {uapi::CUSED_CTL_TRACE, bytes_of(start), kOtherUser, "t"}).error,
      EPERM);
  EXPECT_FALSE(recorder.running());
  uapi::cused_trace relative = start;
  std::strcpy(relative.path, "relative.trace");
  EXPECT_EQ(serve_control(with_trace, {uapi::CUSED_CTL_TRACE, bytes_of(relative), 0, "t"}).error,
            EINVAL);
  uapi::cused_trace stop{};
  EXPECT_EQ(serve_control(with_trace, {uapi::CUSED_CTL_TRACE, bytes_of(stop), 0, "t"}).error,
            ENOENT)
      << "no trace to stop";
}

TEST_F(ControlRequestsTest, RootAndTheDaemonsUserMayControlOthersNot) {
  EXPECT_TRUE(may_control(0));
  EXPECT_TRUE(may_control(geteuid()));
  EXPECT_FALSE(may_control(kOtherUser));
}

}  // namespace
}  // namespace cused::devices
