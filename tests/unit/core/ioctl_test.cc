// SPDX-License-Identifier: GPL-2.0-only
// The ioctls of S2 other than the transaction paths.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include "core/ioctl_argument.h"
#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

constexpr pid_t kPid = 100, kTid = 101;

// S2.7
TEST(Ioctl, VersionIsProtocol8_S2_7) {
  Env env;
  Client client{env, kPid};
  binder_version version{};
  ASSERT_EQ(client.ioctl(kTid, BINDER_VERSION, version), 0);
  EXPECT_EQ(version.protocol_version, 8);
}

// S2.0: unknown codes and the unimplemented SET_IDLE_* are EINVAL.
TEST(Ioctl, UnknownAndIdleIoctlsAreEinval_S2_0) {
  Env env;
  Client client{env, kPid};
  std::int64_t timeout = 5;
  std::int32_t priority = 0;
  EXPECT_EQ(client.ioctl(kTid, BINDER_SET_IDLE_TIMEOUT, timeout), -EINVAL);
  EXPECT_EQ(client.ioctl(kTid, BINDER_SET_IDLE_PRIORITY, priority), -EINVAL);
  EXPECT_EQ(client.ioctl(kTid, 0xc0046299u), -EINVAL);
}

// S1.3: a thread of another process may not use the fd.
TEST(Ioctl, OtherThreadGroupIsEinval_S1_3) {
  Env env;
  Client client{env, kPid};
  IoctlRequest request;
  request.pid = kPid + 1;
  request.tid = kPid + 1;
  request.cmd = BINDER_VERSION;
  long result = 1;
  struct Capture final : Completion {
    long& result;
    testing::FakeUserMemory memory;
    Capture(long& r, const testing::FakeAddressSpace& space) : result(r), memory(space) {}
    void complete(long r, std::span<const std::byte>) override { result = r; }
    UserMemory& user_memory() override { return memory; }
  };
  client.proc().ioctl(request, std::make_unique<Capture>(result, env.address_space));
  EXPECT_EQ(result, -EINVAL);
}

// S2.2: a short argument is EINVAL, not EFAULT.
TEST(Ioctl, SetMaxThreadsShortArgIsEinval_S2_2) {
  Env env;
  Client client{env, kPid};
  std::uint16_t too_small = 4;
  EXPECT_EQ(client.ioctl(kTid, BINDER_SET_MAX_THREADS, too_small), -EINVAL);
  std::uint32_t max = 4;
  EXPECT_EQ(client.ioctl(kTid, BINDER_SET_MAX_THREADS, max), 0);
}

// S2.12: a short argument is EFAULT here.
TEST(Ioctl, EnableOnewaySpamDetectionShortArgIsEfault_S2_12) {
  Env env;
  Client client{env, kPid};
  std::uint16_t too_small = 1;
  EXPECT_EQ(client.ioctl(kTid, BINDER_ENABLE_ONEWAY_SPAM_DETECTION, too_small), -EFAULT);
  std::uint32_t enable = 1;
  EXPECT_EQ(client.ioctl(kTid, BINDER_ENABLE_ONEWAY_SPAM_DETECTION, enable), 0);
}

// S2.3 / S2.4: one manager per context (EBUSY); the first manager's euid is remembered and
// survives the manager's death (EPERM for another euid, success for the same one).
TEST(Ioctl, ContextManagerIsExclusiveAndRemembersEuid_S2_4) {
  Env env;
  auto first = std::make_unique<Client>(env, kPid, /*euid=*/1000);
  Client second{env, kPid + 10, /*euid=*/1000};
  Client other_user{env, kPid + 20, /*euid=*/2000};
  ASSERT_EQ(first->ioctl(kTid, BINDER_SET_CONTEXT_MGR), 0);
  EXPECT_EQ(second.ioctl(kPid + 11, BINDER_SET_CONTEXT_MGR), -EBUSY);
  first->release();
  EXPECT_EQ(other_user.ioctl(kPid + 21, BINDER_SET_CONTEXT_MGR), -EPERM);
  flat_binder_object fbo{};
  fbo.binder = 0x1000;
  fbo.cookie = 0x2000;
  EXPECT_EQ(second.ioctl(kPid + 11, BINDER_SET_CONTEXT_MGR_EXT, fbo), 0);
  // S2.8: the EXT manager node carries the given ptr/cookie and is pinned (has strong/weak).
  binder_node_debug_info info{};
  ASSERT_EQ(second.ioctl(kPid + 11, BINDER_GET_NODE_DEBUG_INFO, info), 0);
  EXPECT_EQ(info.ptr, 0x1000u);
  EXPECT_EQ(info.cookie, 0x2000u);
  EXPECT_EQ(info.has_strong_ref, 1u);
  EXPECT_EQ(info.has_weak_ref, 1u);
}

// S2.8: iterating nodes by feeding back the returned ptr; all-zero at the end.
TEST(Ioctl, NodeDebugInfoIteratesByPtr_S2_8) {
  Env env;
  Client client{env, kPid};
  flat_binder_object fbo{};
  fbo.binder = 0x40;
  fbo.cookie = 0x41;
  ASSERT_EQ(client.ioctl(kTid, BINDER_SET_CONTEXT_MGR_EXT, fbo), 0);
  binder_node_debug_info info{};
  info.ptr = 0;
  ASSERT_EQ(client.ioctl(kTid, BINDER_GET_NODE_DEBUG_INFO, info), 0);
  EXPECT_EQ(info.ptr, 0x40u);
  ASSERT_EQ(client.ioctl(kTid, BINDER_GET_NODE_DEBUG_INFO, info), 0);
  EXPECT_EQ(info.ptr, 0u);
  EXPECT_EQ(info.cookie, 0u);
}

// S2.9: only handle may be set (EINVAL), only the manager may ask (EPERM), the handle must be a
// strong ref (EINVAL).
TEST(Ioctl, NodeInfoForRefRules_S2_9) {
  Env env;
  Client sm{env, kPid};
  Client other{env, kPid + 10};
  ASSERT_EQ(sm.ioctl(kTid, BINDER_SET_CONTEXT_MGR), 0);
  binder_node_info_for_ref info{};
  info.reserved1 = 1;
  EXPECT_EQ(sm.ioctl(kTid, BINDER_GET_NODE_INFO_FOR_REF, info), -EINVAL);
  info = {};
  EXPECT_EQ(other.ioctl(kPid + 11, BINDER_GET_NODE_INFO_FOR_REF, info), -EPERM);
  info.handle = 3;
  EXPECT_EQ(sm.ioctl(kTid, BINDER_GET_NODE_INFO_FOR_REF, info), -EINVAL);
}

// S2.14: a fresh thread's record is {0, BR_OK, 0}.
TEST(Ioctl, ExtendedErrorStartsClear_S2_14) {
  Env env;
  Client client{env, kPid};
  binder_extended_error ee{1, 2, 3};
  ASSERT_EQ(client.ioctl(kTid, BINDER_GET_EXTENDED_ERROR, ee), 0);
  EXPECT_EQ(ee.id, 0u);
  EXPECT_EQ(ee.command, BR_OK);
  EXPECT_EQ(ee.param, 0);
}

}  // namespace
}  // namespace cused::core::test
