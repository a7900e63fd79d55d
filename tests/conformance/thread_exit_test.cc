// SPDX-License-Identifier: GPL-2.0-only
// The ioctls whose argument binder never reads, called as Android calls them: libbinder's
// IPCThreadState::threadDestructor is ioctl(fd, BINDER_THREAD_EXIT, 0), Android 9/10's C
// servicemanager ioctl(fd, BINDER_SET_CONTEXT_MGR, 0) (real-clients issue, point 3).
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>

#include <chrono>
#include <thread>

#include "client/cused_differences.h"
#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

// The result of a raw ioctl with a NULL argument: 0 or -errno.
int NullArgumentIoctl(const Endpoint& endpoint, unsigned long command) {
  return ioctl(endpoint.fd(), command, nullptr) == 0 ? 0 : -errno;
}

// What an ioctl that ignores its argument may answer on this path: the kernel's 0, or, on cused's
// FUSE path without the preload shim, the EFAULT of FUSE's own copy (a documented difference).
void ExpectNullArgumentAccepted(int result) {
  if (client::null_ioctl_argument_reaches_driver(DevicePath())) {
    EXPECT_EQ(result, 0);
  } else {
    EXPECT_TRUE(result == 0 || result == -EFAULT) << result;
  }
}

// S2.6: a looper thread that reads a sync call, leaves with BINDER_THREAD_EXIT(NULL) without
// replying and then exits, as libbinder's threads do, leaves its caller a BR_DEAD_REPLY while the
// server process lives on with its fd open. On cused's FUSE path the ioctl never reaches the
// daemon; the OS thread's exit does the release there (thread_exit_watcher.h).
TEST(ThreadExit, NullArgumentThreadExitThenOsThreadExitGivesTheCallerDeadReply_S2_6) {
  Channel manager_ready, caller_done;
  Child manager([&] {
    Endpoint endpoint = ContextManager();
    manager_ready.send(1);
    int result = 1;
    std::thread looper([&] {
      ASSERT_EQ(endpoint.write(Commands().code(BC_ENTER_LOOPER)), 0);
      Return txn;
      ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
      result = NullArgumentIoctl(endpoint, BINDER_THREAD_EXIT);
    });
    looper.join();
    ExpectNullArgumentAccepted(result);
    EXPECT_TRUE(caller_done.wait()) << "the caller got no BR_DEAD_REPLY";  // the fd stays open
  });
  Child client([&] {
    ASSERT_TRUE(manager_ready.wait());
    Endpoint endpoint(DevicePath());
    CallAndExpectFailureAfterCompletion(endpoint, "abandoned", BR_DEAD_REPLY);
    caller_done.send(1);
  });
  EXPECT_TRUE(client.finish());
  EXPECT_TRUE(manager.finish());
}

// S2.3: BINDER_SET_CONTEXT_MGR never reads its argument (binder_ioctl_set_ctx_mgr(filp, NULL)).
TEST(ThreadExit, SetContextManagerWithNullArgument_S2_3) {
  Child manager([&] {
    Endpoint endpoint(DevicePath());
    // The previous test's manager is released asynchronously (become_context_manager's comment).
    int result = -EBUSY;
    for (int i = 0; i < 500 && result == -EBUSY; ++i) {
      result = NullArgumentIoctl(endpoint, BINDER_SET_CONTEXT_MGR);
      if (result == -EBUSY) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ExpectNullArgumentAccepted(result);
  });
  EXPECT_TRUE(manager.finish());
}

}  // namespace
}  // namespace cused::conformance
