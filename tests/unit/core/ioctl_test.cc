// The ioctls of S2 other than the transaction paths.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include "core/ioctl_argument.h"
#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

constexpr pid_t kPid = 100, kTid = 101;

// S0.1, S2: what binder_ioctl copies for each command. The two that Android calls with NULL
// (libbinder's thread exit, Android 10's servicemanager) read nothing; so does every command it
// refuses with EINVAL. No argument is larger than the frontends' buffer for it.
TEST(Ioctl, KernelArgumentCopiesMatchBinderIoctl_S0_1_S2) {
  for (unsigned cmd : std::initializer_list<unsigned>{BINDER_THREAD_EXIT, BINDER_SET_CONTEXT_MGR,
                                                      BINDER_SET_IDLE_TIMEOUT, 0xc0046299u}) {
    IoctlArgument argument = kernel_ioctl_argument(cmd);
    EXPECT_EQ(argument.copy_in, 0u) << std::hex << cmd;
    EXPECT_EQ(argument.copy_out, 0u) << std::hex << cmd;
  }
  EXPECT_EQ(kernel_ioctl_argument(BINDER_VERSION).copy_in, 0u) << "put_user only";
  EXPECT_EQ(kernel_ioctl_argument(BINDER_VERSION).copy_out_errno, EINVAL);
  EXPECT_EQ(kernel_ioctl_argument(BINDER_GET_EXTENDED_ERROR).copy_in, 0u) << "copy_to_user only";
  EXPECT_EQ(kernel_ioctl_argument(BINDER_SET_MAX_THREADS).copy_out, 0u);
  for (unsigned cmd :
       std::initializer_list<unsigned>{BINDER_WRITE_READ, BINDER_GET_NODE_INFO_FOR_REF,
                                       BINDER_GET_NODE_DEBUG_INFO, BINDER_GET_FROZEN_INFO}) {
    IoctlArgument argument = kernel_ioctl_argument(cmd);
    EXPECT_EQ(argument.copy_in, _IOC_SIZE(cmd));
    EXPECT_EQ(argument.copy_out, _IOC_SIZE(cmd));
    EXPECT_LE(argument.copy_in, sizeof(binder_write_read));
  }
}

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
    SelfMemory memory;
    explicit Capture(long& r) : result(r) {}
    void complete(long r, std::span<const std::byte>) override { result = r; }
    UserMemory& user_memory() override { return memory; }
  };
  client.proc().ioctl(request, std::make_unique<Capture>(result));
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

// S3.1: an unknown command fails the ioctl with EINVAL, write_consumed at it, read_consumed 0,
// and no read happens.
TEST(Ioctl, UnknownCommandStopsWriteWithEinval_S3_1) {
  Env env;
  Client client{env, kPid};
  Commands commands = Commands().u32(BC_ENTER_LOOPER);
  const std::size_t first = commands.bytes.size();
  commands.u32(0x12345678);
  Call call = client.write_read(kTid, commands, 256, false, /*read_consumed=*/8);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), -EINVAL);
  EXPECT_EQ(call.bwr().write_consumed, first);
  EXPECT_EQ(call.bwr().read_consumed, 0u);
}

// S3.1: BC_ATTEMPT_ACQUIRE and BC_ACQUIRE_RESULT were never supported.
TEST(Ioctl, AttemptAcquireAndAcquireResultAreEinval_S3_1) {
  Env env;
  Client client{env, kPid};
  EXPECT_EQ(client.write(kTid, Commands().u32(BC_ATTEMPT_ACQUIRE).u64(0)).result(), -EINVAL);
  EXPECT_EQ(client.write(kTid, Commands().u32(BC_ACQUIRE_RESULT).u32(0)).result(), -EINVAL);
}

// S3.1: an unreadable command or payload is EFAULT with write_consumed at the command; a
// payload may run past write_size, as get_user reads it.
TEST(Ioctl, UnreadableCommandIsEfault_S3_1) {
  Env env;
  Client client{env, kPid};
  binder_write_read bwr{};
  bwr.write_buffer = 0x10;
  bwr.write_size = 4;
  Call bad = client.submit(kTid, bwr);
  ASSERT_TRUE(bad.done());
  EXPECT_EQ(bad.result(), -EFAULT);
  EXPECT_EQ(bad.bwr().write_consumed, 0u);

  // BC_ENTER_LOOPER, then BC_FREE_BUFFER whose payload is cut off by the end of readable memory.
  auto* page = static_cast<std::byte*>(
      mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(page, MAP_FAILED);
  ASSERT_EQ(munmap(page + 4096, 4096), 0);
  std::uint32_t cmds[2] = {BC_ENTER_LOOPER, BC_FREE_BUFFER};
  std::memcpy(page + 4096 - 8, cmds, 8);
  bwr = {};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(page + 4096 - 8);
  bwr.write_size = 8;
  Call cut = client.submit(kTid, bwr);
  ASSERT_TRUE(cut.done());
  EXPECT_EQ(cut.result(), -EFAULT);
  EXPECT_EQ(cut.bwr().write_consumed, 4u);
  munmap(page, 4096);
}

}  // namespace
}  // namespace cused::core::test
