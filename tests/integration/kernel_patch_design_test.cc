// SPDX-License-Identifier: GPL-2.0-only
// A patched kernel tree served beside the unpatched one by one daemon, as a user runs it
// (docs/kernel-designs.md, "Your patch as a design"): `cused kernel-build TREE --patch P`, then
// `cused --device linux:alloc_lock=kernel:7.2 --device patched:alloc_lock=kernel:7.2+P`, and a
// patch that does not apply, given to the running daemon, refused with patch's words in its log
// while it keeps serving. Skipped without the fetched trees (tools/bootstrap).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "client/binder_device.h"
#include "tests/integration/cused_daemon.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::exit_status;
using testing::ToolProcess;

class KernelPatchDesignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* trees = std::getenv("CUSED_KERNEL_TREES");
    if (!trees || !fs::exists(fs::path(trees) / "7.2/src/drivers/android/binder_alloc.c"))
      GTEST_SKIP() << "no kernel trees fetched (tools/bootstrap fetches .deps/kernel/7.2)";
    const fs::path patches =
        fs::path(std::getenv("CUSED_SOURCE_ROOT")) / "tests/kernel-designs/patches";
    patch_ = (patches / "7.2-spinlock-install-mutex.patch").string();
    bad_patch_ = (patches / "7.2-does-not-apply.patch").string();
  }
  void TearDown() override {
    daemon_.reset();
    testing::remove_mount_point(dir_);
  }

  // `command` through the shell with stderr folded in; a build may take a while on a loaded
  // machine.
  static ToolProcess::Result shell(const std::string& command) {
    return testing::run_shell(command, 240s);
  }
  ToolProcess::Result binderctl(const std::string& args) {
    return shell(testing::binary_from_env("BINDERCTL_BINARY") + " --mount " + dir_ + " " + args);
  }
  bool start_daemon(const std::vector<std::string>& args) {
    daemon_.emplace(dir_, args, "binder-control", ToolProcess::Capture::stdout_and_stderr);
    return daemon_->serving();
  }
  // The scratch folders a patched build makes under the cache (none may be left).
  // The scratch folders no live owner holds (scratch_directory.h: an owner keeps an flock on
  // its folder): what a build left behind. The cache is shared with tests that run beside this
  // one, whose builds in progress hold theirs.
  static std::vector<std::string> scratch_left() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(std::getenv("CUSED_KERNEL_CACHE"), ec)) {
      if (!entry.is_directory()) continue;
      const int fd = ::open(entry.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) continue;  // removed meanwhile by its owner
      const bool in_use = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
      ::close(fd);
      if (!in_use) names.push_back(entry.path().filename());
    }
    return names;
  }

  std::string patch_;
  std::string bad_patch_;
  std::string dir_ = testing::make_temp_dir("cused-kernel-patch-");
  std::optional<testing::CusedDaemon> daemon_;
};

TEST_F(KernelPatchDesignTest, OneDaemonServesTheTreeAndTheTreeWithYourPatch) {
  const std::string cused = testing::binary_from_env("CUSED_BINARY");
  auto plain = shell(cused + " kernel-build 7.2");
  ASSERT_EQ(exit_status(plain), 0) << plain.output;
  auto patched = shell(cused + " kernel-build 7.2 --patch " + patch_);
  ASSERT_EQ(exit_status(patched), 0) << patched.output;
  EXPECT_NE(patched.output.find("kernel:7.2+" + patch_ + ": Linux 7.2.8 from "), std::string::npos)
      << patched.output;
  EXPECT_NE(patched.output.find("/7.2/src+7.2-spinlock-install-mutex.patch\n"), std::string::npos)
      << patched.output;
  // Two objects: the patched one is cached under its own sources' hash.
  auto object = [](const std::string& output) {
    auto start = output.find('\n') + 1;
    return output.substr(start, output.find(' ', start) - start);
  };
  EXPECT_NE(object(plain.output), object(patched.output));
  EXPECT_TRUE(fs::exists(object(patched.output))) << patched.output;

  ASSERT_TRUE(start_daemon({"--device", "linux:alloc_lock=kernel:7.2", "--device",
                            "patched:alloc_lock=kernel:7.2+" + patch_}));
  auto listed = binderctl("list");
  EXPECT_EQ(exit_status(listed), 0) << listed.output;
  EXPECT_NE(listed.output.find("linux    alloc_lock=kernel:7.2,pages="), std::string::npos)
      << listed.output;
  EXPECT_NE(listed.output.find("patched  alloc_lock=kernel:7.2+" + patch_ + ",pages="),
            std::string::npos)
      << listed.output;
  EXPECT_EQ(client::BinderDevice(dir_ + "/linux").version(), 8);
  EXPECT_EQ(client::BinderDevice(dir_ + "/patched").version(), 8);
  EXPECT_EQ(scratch_left(), std::vector<std::string>{});
}

// Given to a running daemon, a patch that does not apply is EINVAL, binderctl says the daemon's
// log has why, the log has patch's words, and the daemon serves on with its variants unchanged.
TEST_F(KernelPatchDesignTest, APatchThatDoesNotApplyIsRefusedAndTheDaemonServesOn) {
  ASSERT_TRUE(start_daemon({"--device", "linux:alloc_lock=kernel:7.2"}));
  auto set = binderctl("set linux alloc_lock=kernel:7.2+" + bad_patch_);
  EXPECT_EQ(exit_status(set), 1) << set.output;
  EXPECT_NE(set.output.find("Invalid argument"), std::string::npos) << set.output;
  EXPECT_NE(set.output.find("the daemon could not build or load the kernel design: its log says"),
            std::string::npos)
      << set.output;
  auto create = binderctl("create other:alloc_lock=kernel:7.2+" + bad_patch_);
  EXPECT_EQ(exit_status(create), 1) << create.output;
  EXPECT_FALSE(fs::exists(dir_ + "/other"));

  auto shown = binderctl("show linux");
  EXPECT_EQ(exit_status(shown), 0) << shown.output;
  EXPECT_TRUE(shown.output.starts_with("alloc_lock=kernel:7.2,")) << shown.output;
  EXPECT_EQ(client::BinderDevice(dir_ + "/linux").version(), 8) << "the daemon serves on";
  EXPECT_EQ(scratch_left(), std::vector<std::string>{});

  auto log = daemon_->stop();
  EXPECT_NE(log.output.find("device linux: variant 'alloc_lock=kernel:7.2+" + bad_patch_ +
                            "' refused: bad alloc_lock=kernel:7.2+" + bad_patch_ + ": " +
                            bad_patch_ + " does not apply to "),
            std::string::npos)
      << log.output;
  EXPECT_NE(log.output.find("Hunk #1 FAILED at 120."), std::string::npos) << log.output;
}

}  // namespace
}  // namespace cused
