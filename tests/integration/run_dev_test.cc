// SPDX-License-Identifier: GPL-2.0-only
// The program's /dev under `cused run` (docs/run.md, issue 31): /dev/binderfs is the daemon's
// mount, so that libbinder, which reads exactly /dev/binderfs/features/NAME (Android 14's
// ProcessState), sees the features of the daemon that serves it (S10.5), and the devices under it
// are served as /dev/NAME is.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cused/run/attach.h"
#include "tests/integration/cused_daemon.h"
#include "tests/integration/file_contents.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

using namespace std::chrono_literals;
using testing::binary_from_env;
using testing::exit_status;
using testing::list_dir;
using testing::read_file;
using testing::ToolProcess;
using testing::wait_until;

std::set<std::string> words_of(const std::string& text) {
  std::istringstream stream(text);
  return {std::istream_iterator<std::string>(stream), std::istream_iterator<std::string>()};
}

class RunDevTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.serving());
    ASSERT_TRUE(wait_until([&] { return run::serving_daemon(dir_).has_value(); }));
  }
  // `shell_words` run by sh under `cused run` on the daemon's mount, stderr joined to stdout.
  ToolProcess::Result run(const std::string& shell_words, std::vector<std::string> options = {}) {
    std::vector<std::string> argv{cused_, "run", "--mount", dir_};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", shell_words + " 2>&1"});
    ToolProcess process(argv);
    return process.finish(60s);
  }

  std::string cused_ = binary_from_env("CUSED_BINARY");
  std::string dir_ = testing::make_temp_dir("cused-run-dev-");
  testing::CusedDaemon daemon_{dir_};
};

// S10.5: the program reads the serving daemon's features/ at libbinder's path. The daemon's list
// has defer_complete, which no kernel's binderfs has, so the files cannot be another driver's.
TEST_F(RunDevTest, BinderfsFeaturesAreTheDaemons_S10_5) {
  auto spam = run("cat /dev/binderfs/features/oneway_spam_detection");
  EXPECT_EQ(exit_status(spam), 0) << spam.output;
  EXPECT_EQ(spam.output, read_file(dir_ + "/features/oneway_spam_detection"));
  EXPECT_EQ(spam.output, "1\n");
  auto listing = run("ls /dev/binderfs/features");
  EXPECT_EQ(exit_status(listing), 0) << listing.output;
  EXPECT_EQ(words_of(listing.output), list_dir(dir_ + "/features"));
  EXPECT_TRUE(words_of(listing.output).contains("defer_complete")) << listing.output;
}

// A device reached through /dev/binderfs is served under run as /dev/NAME is: a program using
// /dev/binderfs/binder finds the context manager started on /dev/binder and completes its calls.
TEST_F(RunDevTest, DevicesUnderBinderfsAreServed) {
  std::string throughput = binary_from_env("BINDER_THROUGHPUT_BINARY");
  std::string servicemanager = binary_from_env("SERVICEMANAGER_BINARY");
  auto result = run(throughput + " --device /dev/binderfs/binder -w 2 -i 100",
                    {"--servicemanager=" + servicemanager});
  EXPECT_EQ(exit_status(result), 0) << result.output;
  EXPECT_NE(result.output.find("ioctls per transaction"), std::string::npos) << result.output;
}

// Each lookup of a device through /dev/binderfs reaches the mount and gets an inode of its own,
// as through /dev/NAME (docs/binderfs.md): a bind mount of one node would pin one inode.
TEST_F(RunDevTest, EachLookupThroughBinderfsGetsItsOwnInode) {
  auto result = run("stat -L -c %i /dev/binderfs/binder; stat -L -c %i /dev/binderfs/binder");
  EXPECT_EQ(exit_status(result), 0) << result.output;
  EXPECT_EQ(words_of(result.output).size(), 2u) << result.output;
}

}  // namespace
}  // namespace cused
