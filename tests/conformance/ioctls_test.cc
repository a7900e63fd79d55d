// SPDX-License-Identifier: GPL-2.0-only
// The ioctls of S2 and the context manager (S2.3, S4.1, S6.3), on any binder device
// (docs/conformance.md): every expectation is the kernel's.
#include <errno.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/registration.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

TEST(Ioctls, VersionIsProtocol8_S2_7) {
  Endpoint endpoint(DevicePath());
  EXPECT_EQ(endpoint.device().version(), 8);
}

TEST(Ioctls, SetMaxThreadsSucceeds_S2_2) {
  Endpoint endpoint(DevicePath());
  EXPECT_EQ(endpoint.device().set_max_threads(15), 0);
  EXPECT_EQ(endpoint.device().set_max_threads(0), 0);
}

TEST(Ioctls, UnknownAndUnimplementedIoctlsFailWithEinval_S2_0) {
  Endpoint endpoint(DevicePath());
  std::int64_t argument = 0;
  EXPECT_EQ(endpoint.device().ioctl(_IOW('b', 99, std::int64_t), &argument), -EINVAL);
  EXPECT_EQ(endpoint.device().ioctl(BINDER_SET_IDLE_TIMEOUT, &argument), -EINVAL);
  EXPECT_EQ(endpoint.device().ioctl(BINDER_SET_IDLE_PRIORITY, &argument), -EINVAL);
}

TEST(Ioctls, SecondContextManagerFailsWithEbusy_S2_3) {
  Channel manager_ready, rival_done;
  Child manager([&] {
    Endpoint endpoint(DevicePath());
    ASSERT_TRUE(endpoint.become_context_manager());
    std::int32_t unused = 0;
    EXPECT_EQ(endpoint.device().ioctl(BINDER_SET_CONTEXT_MGR, &unused), -EBUSY) << "same proc";
    manager_ready.send(1);
    EXPECT_TRUE(rival_done.wait());
  });
  Child rival([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    std::int32_t unused = 0;
    EXPECT_EQ(endpoint.device().ioctl(BINDER_SET_CONTEXT_MGR, &unused), -EBUSY);
    rival_done.send(1);
  });
  EXPECT_TRUE(rival.finish());
  EXPECT_TRUE(manager.finish());
}

// S4.1, S6.3: the context manager may not call handle 0 (its own node) nor take a ref on it.
TEST(ContextManager, CannotCallOrReferenceHandleZero_S4_1_S6_3) {
  Endpoint endpoint = ContextManager();
  ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "to myself")), 0);
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));
  EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_FAILED_REPLY}));
  binder_extended_error error = endpoint.extended_error();
  EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_FAILED_REPLY));
  EXPECT_EQ(error.param, -EINVAL);
  for (std::uint32_t command : {BC_INCREFS, BC_ACQUIRE}) {
    binder_size_t consumed = 99;
    EXPECT_EQ(endpoint.write(Commands().ref(command, 0), &consumed), -EINVAL);
    EXPECT_EQ(consumed, 0u);
  }
}

}  // namespace
}  // namespace cused::conformance
