// SPDX-License-Identifier: GPL-2.0-only
// Death notifications (S7): dead binder, clear, clear before death. Every expectation is the
// kernel's.
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

// S7.1-S7.4 with S1.9: the owner is killed; the manager reads BR_DEAD_BINDER, acknowledges it,
// clears the registration and reads BR_CLEAR_DEATH_NOTIFICATION_DONE.
TEST(Death, KilledOwnerGivesDeadBinderThenClearGivesClearDone_S7_2_S7_4) {
  Channel manager_ready, registered, owner_registered;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(1);
    Return registration;
    std::uint32_t handle = ReceiveRegisteredHandle(endpoint, registration);
    FreeAndReply(endpoint, registration, "",
                 Commands()
                     .ref(BC_INCREFS, handle)
                     .ref(BC_ACQUIRE, handle)
                     .death(BC_REQUEST_DEATH_NOTIFICATION, handle, kDeathCookie));
    registered.send(1);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_DEAD_BINDER}));
    EXPECT_EQ(returns[1].cookie, kDeathCookie);
    ASSERT_EQ(endpoint.write(Commands()
                                 .dead_binder_done(kDeathCookie)
                                 .death(BC_CLEAR_DEATH_NOTIFICATION, handle, kDeathCookie)),
              0);
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_CLEAR_DEATH_NOTIFICATION_DONE}));
    EXPECT_EQ(returns[1].cookie, kDeathCookie);

    // S7.1: registering on a handle whose node is already dead reports the death at once.
    ASSERT_EQ(
        endpoint.write(Commands().death(BC_REQUEST_DEATH_NOTIFICATION, handle, kDeathCookie + 1)),
        0);
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_DEAD_BINDER}));
    EXPECT_EQ(returns[1].cookie, kDeathCookie + 1);
    ASSERT_EQ(endpoint.write(Commands().dead_binder_done(kDeathCookie + 1)), 0);

    // S6.8, S4.1: a call on the dead node's handle fails with BR_DEAD_REPLY, no completion.
    ASSERT_EQ(endpoint.write(Commands().transaction(handle, kCallCode, "to the dead")), 0);
    ASSERT_TRUE(endpoint.read(returns));
    EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_DEAD_REPLY}));
    binder_extended_error error = endpoint.extended_error();
    EXPECT_EQ(error.command, static_cast<std::uint32_t>(BR_DEAD_REPLY));
    EXPECT_EQ(error.param, -EINVAL);
    EXPECT_EQ(endpoint.write(Commands().ref(BC_RELEASE, handle).ref(BC_DECREFS, handle)), 0);
  });
  Child owner([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    RegisterObjectWithManager(endpoint, kObjectPtr, kObjectCookie);
    owner_registered.send(::testing::Test::HasFailure() ? 0 : 1);
    ::pause();  // until killed
  });
  std::uint64_t owner_ok = 0;
  ASSERT_TRUE(owner_registered.receive(owner_ok));
  EXPECT_EQ(owner_ok, 1u);
  ASSERT_TRUE(registered.wait());
  owner.kill();
  EXPECT_TRUE(manager.finish());
}

// S7.4 (not yet triggered): clearing a live registration answers CLEAR_DONE at once, and the
// owner's later death sends no BR_DEAD_BINDER.
TEST(Death, ClearBeforeDeathGivesClearDoneAndNoDeadBinder_S7_4) {
  Channel manager_ready, cleared, owner_registered, owner_killed;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(1);
    Return registration;
    std::uint32_t handle = ReceiveRegisteredHandle(endpoint, registration);
    FreeAndReply(endpoint, registration, "",
                 Commands()
                     .ref(BC_INCREFS, handle)
                     .ref(BC_ACQUIRE, handle)
                     .death(BC_REQUEST_DEATH_NOTIFICATION, handle, kDeathCookie));
    ASSERT_EQ(endpoint.write(Commands().death(BC_CLEAR_DEATH_NOTIFICATION, handle, kDeathCookie)),
              0);
    std::vector<Return> returns;
    ASSERT_TRUE(endpoint.read(returns));
    ASSERT_TRUE(HasCodes(returns, {BR_NOOP, BR_CLEAR_DEATH_NOTIFICATION_DONE}));
    EXPECT_EQ(returns[1].cookie, kDeathCookie);
    cleared.send(1);
    ASSERT_TRUE(owner_killed.wait());
    EXPECT_TRUE(endpoint.quiet_for()) << "death reported after the registration was cleared";
  });
  Child owner([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    RegisterObjectWithManager(endpoint, kObjectPtr, kObjectCookie);
    owner_registered.send(::testing::Test::HasFailure() ? 0 : 1);
    ::pause();  // until killed
  });
  std::uint64_t owner_ok = 0;
  ASSERT_TRUE(owner_registered.receive(owner_ok));
  EXPECT_EQ(owner_ok, 1u);
  // The owner dies only once the registration is cleared (else BR_DEAD_BINDER would be right).
  ASSERT_TRUE(cleared.wait());
  owner.kill();
  owner_killed.send(1);
  EXPECT_TRUE(manager.finish());
}

}  // namespace
}  // namespace cused::conformance
