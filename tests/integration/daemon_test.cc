// SPDX-License-Identifier: GPL-2.0-only
// The cused binary as a user runs it: signals, a crashed daemon, --link (issue 2).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/binder_device.h"
#include "cused/run/attach.h"
#include "tests/integration/mounted_binderfs.h"

extern char** environ;

namespace cused {
namespace {

namespace fs = std::filesystem;
using client::BinderDevice;
using testing::is_mounted;
using testing::wait_until;
using namespace std::chrono_literals;

// A cused process serving `dir` in the foreground.
class Daemon {
 public:
  explicit Daemon(const std::string& dir, std::vector<std::string> extra = {}) {
    const char* binary = std::getenv("CUSED_BINARY");
    std::vector<std::string> words{binary ? binary : "cused", "--mount", dir, "--foreground"};
    words.insert(words.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
  }
  ~Daemon() {
    if (pid_ > 0) stop(SIGKILL);
  }
  pid_t pid() const { return pid_; }
  // Sends `signal` and returns the exit status.
  int stop(int signal) {
    kill(pid_, signal);
    return wait();
  }
  // Waits for the daemon to end by itself; its exit status.
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
};

class DaemonTest : public ::testing::Test {
 protected:
  void TearDown() override {
    umount2(dir_.c_str(), MNT_DETACH);
    fs::remove_all(dir_);
  }
  std::string dir_ = testing::make_temp_dir("cused-daemon-");
};

// SIGTERM unmounts cleanly and the daemon exits 0.
TEST_F(DaemonTest, SigtermUnmountsCleanly) {
  Daemon daemon(dir_);
  ASSERT_GT(daemon.pid(), 0);
  ASSERT_TRUE(wait_until([&] { return is_mounted(dir_); }));
  BinderDevice(dir_ + "/binder").version();
  int status = daemon.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(is_mounted(dir_));
}

// SIGTERM while clients still hold open nodes with poll waiters: the daemon releases their procs
// before its FUSE session goes (a release notifies poll handles of that session) and exits 0.
TEST_F(DaemonTest, SigtermWithOpenPolledNodesExitsCleanly) {
  Daemon daemon(dir_);
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir_ + "/binder"); }));
  std::vector<BinderDevice> devices;
  for (int i = 0; i < 8; ++i) {
    devices.emplace_back(dir_ + "/binder");
    std::uint32_t words[16];
    binder_write_read bwr{};
    bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
    bwr.read_size = sizeof words;
    ASSERT_EQ(devices.back().write_read(bwr), 0);  // clears need_return: poll will wait
    pollfd fds{devices.back().fd(), POLLIN, 0};
    EXPECT_EQ(::poll(&fds, 1, 20), 0);  // leaves a poll handle in the daemon
  }
  int status = daemon.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

// A killed daemon: a client blocked in a read and later ioctls get errors, not hangs; the next
// daemon on the same directory cleans the stale mount and serves again.
TEST_F(DaemonTest, KilledDaemonGivesErrorsAndStaleMountIsCleaned) {
  auto daemon = std::make_unique<Daemon>(dir_);
  ASSERT_TRUE(wait_until([&] { return is_mounted(dir_); }));
  BinderDevice device(dir_ + "/binder");
  ASSERT_EQ(device.map(), 0);
  std::atomic<bool> reading{false};
  std::atomic<int> blocked_result{1};
  std::thread reader([&] {
    std::uint32_t words[16];
    binder_write_read bwr{};
    bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
    bwr.read_size = sizeof words;
    device.write_read(bwr);
    reading = true;
    blocked_result = device.write_read(bwr);
  });
  ASSERT_TRUE(wait_until([&] { return reading.load(); }));
  std::this_thread::sleep_for(50ms);
  daemon->stop(SIGKILL);
  reader.join();  // would hang forever if the parked read were not failed
  EXPECT_LT(blocked_result.load(), 0);
  EXPECT_EQ(device.version(), -ENOTCONN);
  struct stat st;
  EXPECT_EQ(stat((dir_ + "/binder").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOTCONN);

  Daemon next(dir_);
  ASSERT_TRUE(wait_until([&] { return stat((dir_ + "/binder").c_str(), &st) == 0; }));
  EXPECT_EQ(BinderDevice(dir_ + "/binder").version(), 8);
}

// What `command` prints on stdout and stderr, and its exit status.
std::pair<std::string, int> output_of(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[512];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  int status = pipe ? pclose(pipe) : -1;
  return {output, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// Without --foreground the command returns once the mount serves (exit 0), saying which pid to
// stop, and the daemon, with its threads (forked before any existed), keeps serving until that
// pid is stopped; a mount point that cannot be made is exit 1.
TEST_F(DaemonTest, BackgroundDaemonPrintsItsPidAndServesAfterCommandReturns) {
  const std::string binary = std::getenv("CUSED_BINARY");
  auto [output, status] = output_of(binary + " --mount " + dir_);
  ASSERT_EQ(status, 0) << output;
  int pid = 0;
  ASSERT_EQ(std::sscanf(output.c_str(), "cused: serving %*s in the background, pid %d", &pid), 1)
      << output;
  EXPECT_EQ(output, fmt::format("cused: serving {} in the background, pid {} (stop it with kill "
                                "{})\n",
                                dir_, pid, pid));
  EXPECT_TRUE(is_mounted(dir_));
  {
    BinderDevice device(dir_ + "/binder");
    std::uint32_t words[16];
    binder_write_read bwr{};
    bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
    bwr.read_size = sizeof words;
    EXPECT_EQ(device.write_read(bwr), 0);  // a new thread's first read: BR_NOOP at once
    EXPECT_EQ(device.version(), 8);
  }
  ASSERT_EQ(kill(pid, SIGTERM), 0);  // what the message says
  EXPECT_TRUE(wait_until([&] { return !is_mounted(dir_); }));
  std::ofstream(dir_ + "/file") << "not a directory";
  EXPECT_EQ(output_of(binary + " --mount " + dir_ + "/file/mount").second, 1);
}

// A missing mount point is made (with its missing parents), and removed again at exit.
TEST_F(DaemonTest, MissingMountPointIsCreatedAndRemovedAtExit) {
  std::string mountpoint = dir_ + "/made/here";
  Daemon daemon(mountpoint);
  ASSERT_TRUE(wait_until([&] { return is_mounted(mountpoint); }));
  EXPECT_EQ(BinderDevice(mountpoint + "/binder").version(), 8);
  int status = daemon.stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(is_mounted(mountpoint));
  EXPECT_FALSE(fs::exists(dir_ + "/made"));
}

// A second daemon on a directory a running cused serves is refused, naming the pid to stop;
// no second mount is stacked on the first.
TEST_F(DaemonTest, SecondDaemonOnAServedDirectoryIsRefusedNamingThePid) {
  Daemon first(dir_);
  ASSERT_TRUE(wait_until([&] { return run::serving_daemon(dir_).has_value(); }));
  auto [output, status] =
      output_of(std::string(std::getenv("CUSED_BINARY")) + " --mount " + dir_ + " --foreground");
  EXPECT_EQ(status, 1);
  EXPECT_NE(output.find(fmt::format("{} is served already by cused pid {} (stop it with kill {}",
                                    dir_, first.pid(), first.pid())),
            std::string::npos)
      << output;
  EXPECT_EQ(testing::mounts_under(dir_).size(), 1u);
  EXPECT_EQ(BinderDevice(dir_ + "/binder").version(), 8);
}

// --link makes /dev-style symlinks, never replaces something that is not ours, and removes its
// own links at exit.
TEST_F(DaemonTest, LinksAreMadeAndRemoved) {
  std::string links = testing::make_temp_dir("cused-links-");
  std::ofstream(links + "/hwbinder") << "not ours";
  {
    Daemon daemon(dir_, {"--link", links});
    ASSERT_TRUE(wait_until([&] { return fs::is_symlink(links + "/vndbinder"); }));
    EXPECT_EQ(fs::read_symlink(links + "/binder"), fs::path(dir_) / "binder");
    EXPECT_TRUE(fs::is_symlink(links + "/binder"));
    EXPECT_FALSE(fs::is_symlink(links + "/hwbinder"));
    EXPECT_EQ(BinderDevice(links + "/binder").version(), 8);
    daemon.stop(SIGTERM);
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(links + "/binder")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(links + "/vndbinder")));
  EXPECT_TRUE(fs::is_regular_file(links + "/hwbinder"));
  fs::remove_all(links);
}

// A daemon that dies of a bug (a crash signal, or std::terminate) still detaches its mount and
// removes its --link symlinks, so clients see ENOENT rather than a dangling mount ("Transport
// endpoint is not connected"); the process still ends with the signal the bug raised (real-clients
// issue, point 1). CUSED_INJECT_FAILURE makes the first ioctl's handler crash.
TEST_F(DaemonTest, FatalErrorDetachesMountAndRemovesLinks) {
  for (auto [how, signal] : {std::pair{"crash", SIGSEGV}, {"terminate", SIGABRT}}) {
    SCOPED_TRACE(how);
    std::string links = testing::make_temp_dir("cused-links-");
    setenv("CUSED_INJECT_FAILURE", (std::string("binderfs:ioctl:") + how).c_str(), 1);
    Daemon daemon(dir_, {"--link", links});
    unsetenv("CUSED_INJECT_FAILURE");
    ASSERT_TRUE(wait_until([&] { return fs::is_symlink(links + "/binder"); }));
    EXPECT_LT(BinderDevice(links + "/binder").version(), 0) << "the ioctl that ended the daemon";
    int status = daemon.wait();
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal) << "status " << status;
    EXPECT_FALSE(is_mounted(dir_));
    EXPECT_FALSE(fs::exists(fs::symlink_status(links + "/binder")));
    EXPECT_FALSE(fs::exists(fs::symlink_status(links + "/vndbinder")));
    fs::remove_all(links);
  }
}

}  // namespace
}  // namespace cused
