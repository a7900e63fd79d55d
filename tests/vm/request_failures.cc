// SPDX-License-Identifier: GPL-2.0-only
// request_failures DEVICE: run while the daemon serving DEVICE was started with
// CUSED_INJECT_FAILURE=ENTRY:open,ENTRY:ioctl,ENTRY:poll (tests/vm/check.tests does it for the
// CUSE frontend, whose handlers the host cannot reach: no CUSE there). Each injected failure
// fails only its own request, with EIO, and the daemon serves the next one and other clients
// (real-clients issue, point 1; the binderfs frontend's handlers are covered on the host by
// tests/integration/request_failures_test.cc).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "uapi/binder.h"

namespace {

std::string g_device;

int Version(int fd) {
  binder_version version{};
  return ioctl(fd, BINDER_VERSION, &version) == 0 ? version.protocol_version : -errno;
}

TEST(RequestFailures, EachInjectedFailureFailsOnlyItsRequest) {
  EXPECT_EQ(open(g_device.c_str(), O_RDWR | O_CLOEXEC), -1);
  EXPECT_EQ(errno, EIO) << "the injected open";
  int fd = open(g_device.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0) << "the next open is served";
  EXPECT_EQ(Version(fd), -EIO) << "the injected ioctl";
  EXPECT_EQ(Version(fd), 8) << "the next ioctl is served";
  pollfd fds{fd, POLLIN, 0};
  ASSERT_EQ(poll(&fds, 1, 0), 1);
  EXPECT_TRUE(fds.revents & POLLERR) << "FUSE turns the injected poll failure into POLLERR";
  int other = open(g_device.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(other, 0);
  EXPECT_EQ(Version(other), 8) << "another client is served";
  EXPECT_EQ(Version(fd), 8);
  close(other);
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) return 2;
  g_device = argv[1];
  return RUN_ALL_TESTS();
}
