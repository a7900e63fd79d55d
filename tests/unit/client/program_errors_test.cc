// SPDX-License-Identifier: GPL-2.0-only
// client/program_errors: the line a cused program prints when it fails (what failed; what to do)
// and the exit code, instead of "terminate called after throwing ..." (issue 35).
#include "client/program_errors.h"

#include <errno.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "client/binder_device.h"

namespace cused::client {
namespace {

namespace fs = std::filesystem;

// A /proc/mounts with one cused mount on `dir`, as the daemon's own mount line reads.
std::string mounts_file_serving(const std::string& dir) {
  std::string path =
      fs::temp_directory_path() / ("program-errors-mounts-" + std::to_string(getpid()));
  std::ofstream(path) << "proc /proc proc rw 0 0\ncused " << dir
                      << " fuse.binder rw,nosuid,nodev,relatime,user_id=0 0 0\n";
  return path;
}

std::string stderr_of(const std::function<int()>& body, int& exit_code) {
  ::testing::internal::CaptureStderr();
  exit_code = guarded_main("/usr/bin/some-tool", body);
  return ::testing::internal::GetCapturedStderr();
}

TEST(DescribeOpenFailure, MissingDeviceWithNoDaemonSaysToStartCused) {
  std::string line = describe_open_failure("/dev/binder", ENOENT, "/dev/null");
  EXPECT_EQ(line.rfind("open /dev/binder: No such file or directory — no binder device there; "
                       "start cused (cused run --servicemanager -- ",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find("or cused --mount DIR)"), std::string::npos) << line;
}

TEST(DescribeOpenFailure, MissingDeviceInACusedMountSaysToCreateIt) {
  std::string mounts = mounts_file_serving("/run/binderfs");
  EXPECT_EQ(describe_open_failure("/run/binderfs/mydev", ENOENT, mounts),
            "open /run/binderfs/mydev: No such file or directory — cused serves /run/binderfs but "
            "has no device mydev there; `binderctl create mydev`");
  fs::remove(mounts);
}

TEST(DescribeOpenFailure, DeadMountSaysToUnmountIt) {
  std::string line = describe_open_failure("/tmp/rb/binder", ENOTCONN, "/dev/null");
  EXPECT_NE(line.find("Transport endpoint is not connected — the cused that served /tmp/rb has "
                      "exited and left its mount; umount /tmp/rb"),
            std::string::npos)
      << line;
}

TEST(DescribeOpenFailure, BinderDeviceThrowsItWithTheDevicesName) {
  try {
    BinderDevice device("/nonexistent-cused-dir/binder");
    FAIL() << "opened a device that does not exist";
  } catch (const DeviceOpenError& error) {
    EXPECT_EQ(error.code().value(), ENOENT);
    EXPECT_EQ(error.device(), "/nonexistent-cused-dir/binder");
    EXPECT_NE(std::string(error.what())
                  .find("open /nonexistent-cused-dir/binder: No such file or "
                        "directory — no binder device there"),
              std::string::npos)
        << error.what();
  }
}

// What a client's ioctl gets when its daemon exits (measured with servicemanager, see
// tests/integration/servicemanager_test.cc): ENOTCONN (cused stopped), ECONNABORTED (killed),
// ENOSYS (under `cused run`). A live driver's errors are not it.
TEST(BinderDaemonGone, OnlyTheErrnosOfAnExitedDaemon) {
  for (int err : {ENOTCONN, ECONNABORTED, ENOSYS}) EXPECT_TRUE(binder_daemon_gone(err)) << err;
  for (int err : {0, EINTR, EAGAIN, EINVAL, EBUSY, EPERM, EFAULT, ENOMEM, ESRCH})
    EXPECT_FALSE(binder_daemon_gone(err)) << err;
  EXPECT_NE(describe_daemon_gone("/dev/binder", ENOSYS)
                .find("the binder daemon serving /dev/binder went away (Function not "
                      "implemented); restart cused, then "),
            std::string::npos);
}

TEST(GuardedMain, ReturnsTheBodysExitCode) {
  int code = -1;
  EXPECT_EQ(stderr_of([] { return 7; }, code), "");
  EXPECT_EQ(code, 7);
}

TEST(GuardedMain, AnExceptionIsOneLineNamedForTheProgramAndExitCodeOne) {
  int code = 0;
  EXPECT_EQ(stderr_of([]() -> int { throw std::runtime_error("cannot write out.json"); }, code),
            "some-tool: cannot write out.json\n");
  EXPECT_EQ(code, 1);
}

TEST(GuardedMain, AProgramErrorKeepsItsExitCode) {
  int code = 0;
  EXPECT_EQ(stderr_of([]() -> int { throw ProgramError("the daemon went away", 3); }, code),
            "some-tool: the daemon went away\n");
  EXPECT_EQ(code, 3);
}

TEST(GuardedMain, ADeviceThatCannotBeOpenedSaysWhatToDo) {
  int code = 0;
  std::string line = stderr_of(
      []() -> int {
        BinderDevice device("/nonexistent-cused-dir/binder");
        return 0;
      },
      code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(line.rfind("some-tool: open /nonexistent-cused-dir/binder: No such file or directory "
                       "— no binder device there; start cused",
                       0),
            0u)
      << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
}

TEST(GuardedMain, AnErrnoOfAGoneDaemonSaysSo) {
  int code = 0;
  std::string line = stderr_of(
      []() -> int { throw std::system_error(ENOTCONN, std::generic_category(), "BINDER_VERSION"); },
      code);
  EXPECT_EQ(line,
            "some-tool: BINDER_VERSION: Transport endpoint is not connected; the binder daemon "
            "went away: restart cused, then some-tool\n");
}

TEST(GuardedMain, AnythingElseThrownIsStillOneLine) {
  int code = 0;
  EXPECT_EQ(stderr_of([]() -> int { throw 42; }, code),
            "some-tool: failed with an unknown exception; please report it\n");
  EXPECT_EQ(code, 1);
}

}  // namespace
}  // namespace cused::client
