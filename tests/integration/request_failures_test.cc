// SPDX-License-Identifier: GPL-2.0-only
// No exception leaves a request handler (real-clients issue, point 1): a handler that throws fails
// only its own request, with EIO, the failure is counted in binder_logs/stats, and the daemon goes
// on serving that client and every other. The throw is injected into each kind of handler of the
// binderfs frontend: device nodes, binder-control, binder_logs.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "client/binder_device.h"
#include "cused/request/failures.h"
#include "tests/integration/mounted_binderfs.h"
#include "uapi/binder.h"

namespace cused {
namespace {

using client::BinderDevice;
using testing::MountedBinderfs;

// errno of a call that returns -1 on failure; 0 when it succeeded.
int error_of(long result) { return result < 0 ? errno : 0; }

// errno of opening `path` (closed again at once); 0 when it opened.
int open_error(const std::string& path, int flags) {
  int fd = open(path.c_str(), flags | O_CLOEXEC);
  int err = error_of(fd);
  if (fd >= 0) close(fd);
  return err;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class RequestFailuresTest : public ::testing::Test {
 protected:
  // The next request `op` at `entry` throws: `call` must fail with EIO, the failure must be
  // counted, and the same call must then work.
  void ExpectOneFailure(RequestEntry entry, const char* op, const std::function<int()>& call) {
    SCOPED_TRACE(std::string(entry_name(entry)) + " " + op);
    std::uint64_t before = RequestFailures::global().count(entry);
    RequestFailures::global().inject(entry, op);
    EXPECT_EQ(call(), EIO);
    EXPECT_EQ(RequestFailures::global().count(entry), before + 1);
    EXPECT_EQ(call(), 0) << "the next request is served";
  }

  // The daemon still serves a fresh client: open, map, BINDER_VERSION.
  void ExpectServing() {
    BinderDevice device(mount_.path("binder"));
    EXPECT_EQ(device.map(), 0);
    EXPECT_EQ(device.version(), 8);
  }

  MountedBinderfs mount_;
};

TEST_F(RequestFailuresTest, DeviceNodeHandlersFailOnlyTheirRequest) {
  const std::string node = mount_.path("binder");
  BinderDevice other(node);  // a client that is not involved keeps working throughout
  ASSERT_EQ(other.map(), 0);
  // A name the kernel has not looked up yet: a failed LOOKUP while revalidating a cached entry
  // only makes the kernel look the name up again.
  const std::string fresh = mount_.path("vndbinder");
  ExpectOneFailure(RequestEntry::kBinderfs, "lookup", [&] { return open_error(fresh, O_RDWR); });
  ExpectOneFailure(RequestEntry::kBinderfs, "open", [&] { return open_error(node, O_RDWR); });
  BinderDevice device(node);
  ASSERT_EQ(device.map(), 0);
  ExpectOneFailure(RequestEntry::kBinderfs, "ioctl", [&] {
    binder_version version{};
    return error_of(ioctl(device.fd(), BINDER_VERSION, &version));
  });
  ExpectOneFailure(RequestEntry::kBinderfs, "getattr", [&] {
    struct stat st {};
    return error_of(fstat(device.fd(), &st));  // attributes of device nodes are never cached
  });
  ExpectOneFailure(RequestEntry::kBinderfs, "poll", [&] {
    pollfd fds{device.fd(), POLLIN, 0};
    int ready = poll(&fds, 1, 0);
    // FUSE turns a failed POLL into POLLERR; a served one has no error for a fresh thread.
    return ready == 1 && (fds.revents & POLLERR) ? EIO : 0;
  });
  ExpectOneFailure(RequestEntry::kBinderfs, "flush", [&] {
    int copy = dup(device.fd());
    return error_of(close(copy));
  });
  ExpectOneFailure(RequestEntry::kBinderfs, "readdir", [&] {
    DIR* dir = opendir(mount_.dir().c_str());
    if (!dir) return errno;
    errno = 0;
    int err = 0;
    while (readdir(dir) != nullptr) {
    }
    err = errno;
    closedir(dir);
    return err;
  });
  EXPECT_EQ(other.version(), 8);
  EXPECT_EQ(device.version(), 8);
  ExpectServing();
}

TEST_F(RequestFailuresTest, ControlNodeIoctlFailsOnlyItsRequest_S10_3) {
  int control = open(mount_.path("binder-control").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(control, 0);
  int added = 0;
  ExpectOneFailure(RequestEntry::kControl, "ioctl", [&] {
    binderfs_device device{};
    std::snprintf(device.name, sizeof device.name, "added%d", added);
    int err = error_of(ioctl(control, BINDER_CTL_ADD, &device));
    if (err == 0) ++added;
    return err;
  });
  close(control);
  EXPECT_EQ(added, 1);
  BinderDevice device(mount_.path("added0"));
  EXPECT_EQ(device.version(), 8);
  ExpectServing();
}

TEST_F(RequestFailuresTest, LogsHandlersFailOnlyTheirRequestAndStatsCountFailures_S10_6) {
  const std::string stats = mount_.path("binder_logs/stats");
  ExpectOneFailure(RequestEntry::kLogs, "open", [&] { return open_error(stats, O_RDONLY); });
  ExpectOneFailure(RequestEntry::kLogs, "read", [&] {
    int fd = open(stats.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    char buffer[64];
    int err = error_of(read(fd, buffer, sizeof buffer));
    close(fd);
    return err;
  });
  std::string text = read_file(stats);
  std::string expected =
      "cused requests failed by an exception: binderfs " +
      std::to_string(RequestFailures::global().count(RequestEntry::kBinderfs)) + " control " +
      std::to_string(RequestFailures::global().count(RequestEntry::kControl)) + " binder_logs " +
      std::to_string(RequestFailures::global().count(RequestEntry::kLogs));
  EXPECT_NE(text.find(expected), std::string::npos) << text;
  ExpectServing();
}

}  // namespace
}  // namespace cused
