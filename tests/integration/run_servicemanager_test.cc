// SPDX-License-Identifier: GPL-2.0-only
// `cused run --servicemanager[=PROGRAM]` (issue 35): a context manager is started in the
// namespace and answers before the program runs, so that a client works as the first command;
// a context manager that answers already is not started a second time.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "cused/run/attach.h"
#include "cused/run/context_manager.h"
#include "tests/integration/cused_daemon.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

using namespace std::chrono_literals;
using testing::binary_from_env;
using testing::exit_status;
using testing::ToolProcess;
using testing::wait_until;

// `words` run through sh with stderr joined to stdout.
ToolProcess::Result run_with_stderr(const std::string& words) {
  return testing::run_shell(words, 60s);
}

class RunServicemanagerTest : public ::testing::Test {
 protected:
  std::string cused_ = binary_from_env("CUSED_BINARY");
  std::string servicemanager_ = binary_from_env("SERVICEMANAGER_BINARY");
  std::string throughput_ = binary_from_env("BINDER_THROUGHPUT_BINARY");
};

// The README's first command: the default servicemanager (the build tree's, next to cused)
// answers before binder-throughput asks for it, and the run ends with the program's status.
TEST_F(RunServicemanagerTest, ContextManagerIsStartedBeforeTheProgram) {
  auto result =
      run_with_stderr(cused_ + " run --servicemanager -- " + throughput_ + " -w 2 -i 100");
  EXPECT_EQ(exit_status(result), 0) << result.output;
  EXPECT_NE(result.output.find("ioctls per transaction"), std::string::npos) << result.output;
}

// With a context manager already registered on the daemon the program attaches to,
// --servicemanager is refused (exit 125, saying so) and the program is not run.
TEST_F(RunServicemanagerTest, RefusedWhenAContextManagerAnswers) {
  testing::CusedDaemon daemon(testing::make_temp_dir("cused-run-sm-"));
  const std::string& dir = daemon.dir();
  ASSERT_TRUE(daemon.serving());
  ASSERT_TRUE(wait_until([&] { return run::serving_daemon(dir).has_value(); }));
  ToolProcess manager({cused_, "run", "--mount", dir, "--", servicemanager_});
  ASSERT_TRUE(wait_until([&] { return run::context_manager_answers(dir + "/binder"); }));
  std::string marker = dir + "-ran";
  auto result =
      run_with_stderr(cused_ + " run --mount " + dir + " --servicemanager=" + servicemanager_ +
                      " -- /bin/touch " + marker);
  EXPECT_EQ(exit_status(result), 125) << result.output;
  EXPECT_NE(result.output.find("a context manager already answers on " + dir + "/binder"),
            std::string::npos)
      << result.output;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the program ran";
  EXPECT_TRUE(run::context_manager_answers(dir + "/binder")) << "the first one was disturbed";
  kill(manager.pid(), SIGTERM);
  manager.finish(10s);
}

}  // namespace
}  // namespace cused
