// SPDX-License-Identifier: GPL-2.0-only
// tools/binderctl and `cused --device NAME:SPEC` / `--variant SPEC` as a user runs them: a real
// cused process, binderctl as another (issue 6, docs/design.md sections 5 and 6).
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "client/binder_device.h"
#include "client/cused_mounts.h"
#include "core/alloc/variant.h"
#include "tests/integration/cused_daemon.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"
#include "tools/programs/binderctl_control.h"
#include "uapi/binder.h"

namespace cused {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::exit_status;
using testing::ToolProcess;

// `command` through the shell, stderr folded in.
ToolProcess::Result run_shell(const std::string& command) {
  return testing::run_shell(command, 20s);
}

class BinderctlTest : public ::testing::Test {
 protected:
  void TearDown() override {
    daemon_.reset();
    testing::remove_mount_point(dir_);  // a test without a daemon_ has its dir_ too
  }

  // cused on dir_ in the foreground with `args`; true once binder-control is served.
  bool start_daemon(const std::vector<std::string>& args) {
    daemon_.emplace(dir_, args, "binder-control");
    return daemon_->serving();
  }

  ToolProcess::Result binderctl(const std::string& args) {
    return run_shell(testing::binary_from_env("BINDERCTL_BINARY") + " --mount " + dir_ + " " +
                     args);
  }

  std::string dir_ = testing::make_temp_dir("cused-binderctl-");
  std::optional<testing::CusedDaemon> daemon_;
};

// A bad spec on the command line: exit status 2 with the parser's message, nothing mounted.
TEST_F(BinderctlTest, CusedRefusesABadSpecWithStatus2) {
  std::string cused = testing::binary_from_env("CUSED_BINARY") + " --foreground --mount " + dir_;
  auto bad_device = run_shell(cused + " --device binder --device x:alloc_lock=rwlock");
  EXPECT_EQ(exit_status(bad_device), 2) << bad_device.output;
  EXPECT_NE(bad_device.output.find(
                "--device x:alloc_lock=rwlock: bad alloc_lock=rwlock: expected one of " +
                core::alloc::lock_variant_names()),
            std::string::npos)
      << bad_device.output;
  auto bad_default = run_shell(cused + " --variant defer_complete=maybe");
  EXPECT_EQ(exit_status(bad_default), 2) << bad_default.output;
  EXPECT_NE(bad_default.output.find("bad defer_complete=maybe: expected one of on|off"),
            std::string::npos)
      << bad_default.output;
  EXPECT_FALSE(fs::exists(dir_ + "/binder-control"));
}

// --device NAME:SPEC and --variant (the default, also the base of every spec), as binderctl
// lists them; create, set and show change and read them in the running daemon.
TEST_F(BinderctlTest, ListCreateSetShowAgainstARunningDaemon) {
  ASSERT_TRUE(start_daemon({"--device", "binder", "--device", "fast:alloc_lock=spin-install",
                            "--variant", "pages=lazy"}));
  auto listed = binderctl("list");
  EXPECT_EQ(exit_status(listed), 0);
  EXPECT_EQ(listed.output,
            "DEVICE  VARIANT\n"
            "binder  "
            "alloc_lock=mutex,pages=lazy,lock_policy=barging,defer_complete=on,exec_context=caller,"
            "install_latency_us=0\n"
            "fast    "
            "alloc_lock=spin-install,pages=lazy,lock_policy=barging,defer_complete=on,exec_context="
            "caller,install_latency_us=0\n");

  auto created = binderctl("create slow:lock_policy=handoff,defer_complete=off");
  EXPECT_EQ(exit_status(created), 0) << created.output;
  EXPECT_EQ(created.output,
            "slow  "
            "alloc_lock=mutex,pages=lazy,lock_policy=handoff,defer_complete=off,exec_context="
            "caller,install_latency_us=0\n");
  EXPECT_EQ(client::BinderDevice(dir_ + "/slow").version(), 8) << "the new node serves";

  auto changed = binderctl("set binder alloc_lock=spin");
  EXPECT_EQ(exit_status(changed), 0) << changed.output;
  EXPECT_EQ(changed.output,
            "binder  "
            "alloc_lock=spin,pages=lazy,lock_policy=barging,defer_complete=on,exec_context=caller,"
            "install_latency_us=0  (procs "
            "opened from now on; open ones keep theirs)\n");
  auto shown = binderctl("show binder");
  EXPECT_EQ(shown.output,
            "alloc_lock=spin,pages=lazy,lock_policy=barging,defer_complete=on,exec_context=caller,"
            "install_latency_us=0\n");

  auto again = binderctl("list");
  EXPECT_NE(again.output.find("slow    alloc_lock=mutex,pages=lazy,lock_policy=handoff"),
            std::string::npos)
      << again.output;
}

// Every refusal is a nonzero exit and a message that says what to do.
TEST_F(BinderctlTest, ErrorsAreClearAndNonzero) {
  ASSERT_TRUE(start_daemon({}));
  auto unknown = binderctl("set nosuch pages=lazy");
  EXPECT_EQ(exit_status(unknown), 1);
  EXPECT_NE(unknown.output.find("set variant of nosuch: No such file or directory"),
            std::string::npos)
      << unknown.output;
  auto bad_spec = binderctl("set binder colour=blue");
  EXPECT_EQ(exit_status(bad_spec), 1);
  EXPECT_NE(bad_spec.output.find("unknown variant key 'colour'"), std::string::npos)
      << bad_spec.output;
  auto bad_create = binderctl("create other:pages=sometimes");
  EXPECT_EQ(exit_status(bad_create), 1);
  EXPECT_NE(bad_create.output.find("bad pages=sometimes: expected one of eager|lazy"),
            std::string::npos)
      << bad_create.output;
  EXPECT_FALSE(fs::exists(dir_ + "/other"));
  auto exists = binderctl("create binder");
  EXPECT_EQ(exit_status(exists), 1);
  EXPECT_NE(exists.output.find("File exists"), std::string::npos) << exists.output;
  auto show = binderctl("show binder");
  EXPECT_EQ(show.output,
            "alloc_lock=mutex,pages=eager,lock_policy=barging,defer_complete=on,exec_context="
            "caller,install_latency_us=0\n")
      << "refused requests changed nothing";
}

// S10.3: binderfs refuses "", ".", ".." and names with '/' with EACCES; binderctl keeps the
// kernel's errno and says the name is the problem, not binder-control's owner.
TEST_F(BinderctlTest, S10_3_AnInvalidNameIsSaidToBeInvalid) {
  ASSERT_TRUE(start_daemon({}));
  for (const std::string name : {"bad/name", "..", "bad/name:pages=lazy"}) {
    auto create = binderctl("create '" + name + "'");
    EXPECT_EQ(exit_status(create), 1) << create.output;
    std::string bare = name.substr(0, name.find(':'));
    EXPECT_EQ(create.output, "binderctl: BINDER_CTL_ADD " + name + ": Permission denied\n  '" +
                                 bare +
                                 "' is not a valid device name: binderfs refuses \"\", \".\", "
                                 "\"..\" and names with '/'\n");
  }
}

// binderctl shrink asks the daemon's shrinker and prints what it freed.
TEST_F(BinderctlTest, ShrinkReportsWhatTheShrinkerFreed) {
  ASSERT_TRUE(start_daemon({}));
  auto shrunk = binderctl("shrink");
  EXPECT_EQ(exit_status(shrunk), 0) << shrunk.output;
  EXPECT_NE(shrunk.output.find("freed 0 pages (0 bytes), skipped 0 busy"), std::string::npos)
      << "a daemon with no proc has nothing to free: " << shrunk.output;
}

// binderctl trace start FILE | stop (docs/tracing.md): a running daemon writes the binder events
// from the start to the stop, the task being the caller's thread; a second start and a stop with
// no trace say why they fail.
TEST_F(BinderctlTest, TraceStartsAndStopsOnARunningDaemon) {
  ASSERT_TRUE(start_daemon({}));
  const std::string file = dir_ + ".trace";
  auto stop = binderctl("trace stop");
  EXPECT_EQ(exit_status(stop), 1);
  EXPECT_NE(stop.output.find("no trace is being written"), std::string::npos) << stop.output;
  auto start = binderctl("trace start " + file);
  ASSERT_EQ(exit_status(start), 0) << start.output;
  EXPECT_EQ(start.output, "tracing to " + file + "\n");
  auto again = binderctl("trace start " + file);
  EXPECT_EQ(exit_status(again), 1);
  EXPECT_NE(again.output.find("a trace is being written already"), std::string::npos)
      << again.output;
  {
    int fd = open((dir_ + "/binder").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    binder_version version{};
    EXPECT_EQ(ioctl(fd, BINDER_VERSION, &version), 0);
    close(fd);
  }
  stop = binderctl("trace stop");
  ASSERT_EQ(exit_status(stop), 0) << stop.output;
  std::ifstream in(file);
  std::vector<std::string> events;
  std::string last;
  for (std::string line; std::getline(in, line); last = line)
    if (line[0] != '#') events.push_back(line);
  // Then the Trace Event Format beside the trace (issue 47 point 3), which it names.
  EXPECT_EQ(
      stop.output.rfind(
          std::to_string(events.size()) + " events written, 0 dropped\n" + file + ".json: ", 0),
      0u)
      << stop.output;
  std::ifstream json_in(file + ".json");
  std::string json_text((std::istreambuf_iterator<char>(json_in)),
                        std::istreambuf_iterator<char>());
  EXPECT_EQ(json_text.rfind("{\"displayTimeUnit\":\"ns\",", 0), 0u) << json_text.substr(0, 80);
  EXPECT_NE(json_text.find("\"thread_name\""), std::string::npos);
  const std::string me = "-" + std::to_string(gettid()) + " ";
  const std::string version_ioctl =
      fmt::format("binder_ioctl: cmd=0x{:x} arg=0x", static_cast<unsigned>(BINDER_VERSION));
  bool traced = false;
  for (const std::string& line : events)
    traced = traced ||
             (line.find(me) != std::string::npos && line.find(version_ioctl) != std::string::npos);
  EXPECT_TRUE(traced) << "no BINDER_VERSION of this thread in " << file;
  EXPECT_EQ(last.rfind("# cused: " + std::to_string(events.size()) + " events written", 0), 0u)
      << last;
  fs::remove(file);
  fs::remove(file + ".json");
}

// state and stats print binder_logs/ files; a mount without them says so and fails.
// A device given as a path is a CUSE node (docs/cuse.md; the guest's cuse-variant-live changes
// one's variant): a mount's node is not one, and binderctl says how to name it instead; a CUSE
// node that does not exist is the open's error. The variant is left alone.
TEST_F(BinderctlTest, ADevicePathThatIsNoCuseNodeIsSaidToBeNone) {
  ASSERT_TRUE(start_daemon({"--device", "binder"}));
  auto on_mount_node = binderctl("set " + dir_ + "/binder pages=lazy");
  EXPECT_EQ(exit_status(on_mount_node), 1) << on_mount_node.output;
  EXPECT_NE(on_mount_node.output.find("is not a CUSE node"), std::string::npos)
      << on_mount_node.output;
  EXPECT_NE(on_mount_node.output.find("binderctl --mount DIR set NAME"), std::string::npos)
      << on_mount_node.output;
  auto missing = binderctl("--cuse /dev/cused-no-such-node shrink");
  EXPECT_EQ(exit_status(missing), 1) << missing.output;
  EXPECT_NE(missing.output.find("open /dev/cused-no-such-node: No such file or directory"),
            std::string::npos)
      << missing.output;
  auto show = binderctl("show binder");
  EXPECT_EQ(show.output.find("pages=lazy"), std::string::npos) << show.output;
}

TEST_F(BinderctlTest, StateWithoutBinderLogsSaysSo) {
  auto state =
      run_shell(testing::binary_from_env("BINDERCTL_BINARY") + " --mount " + dir_ + " state");
  EXPECT_EQ(exit_status(state), 1);
  EXPECT_NE(state.output.find("this cused serves no binder_logs/"), std::string::npos)
      << state.output;
}

TEST_F(BinderctlTest, StateAndStatsPrintTheDaemonsFiles) {
  ASSERT_TRUE(start_daemon({}));
  ASSERT_TRUE(fs::exists(dir_ + "/binder_logs/stats")) << "cused always serves binder_logs/";
  for (const char* file : {"state", "stats"}) {
    auto printed = binderctl(file);
    EXPECT_EQ(exit_status(printed), 0) << printed.output;
    std::ifstream in(dir_ + "/binder_logs/" + file);
    std::stringstream content;
    content << in.rdbuf();
    EXPECT_FALSE(printed.output.empty());
    // The files are live; compare their first lines, which name the file's kind.
    EXPECT_EQ(printed.output.substr(0, printed.output.find('\n')),
              content.str().substr(0, content.str().find('\n')));
  }
}

// Without --mount binderctl looks for cused in /proc/mounts (fsname "cused"), paths unescaped.
TEST(BinderctlMounts, FindsCusedMountsByFsname) {
  std::string dir = testing::make_temp_dir("cused-mounts-");
  std::ofstream(dir + "/mounts") << "proc /proc proc rw,nosuid 0 0\n"
                                    "cused /tmp/with\\040space fuse.binder rw,nosuid,nodev 0 0\n"
                                    "other /mnt/x fuse.sshfs rw 0 0\n"
                                    "cused /run/cused fuse.binder rw 0 0\n";
  EXPECT_EQ(client::find_cused_mounts(dir + "/mounts"),
            (std::vector<std::string>{"/tmp/with space", "/run/cused"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cused
