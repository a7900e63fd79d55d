// SPDX-License-Identifier: GPL-2.0-only
// binder-ab stopped by a signal (Ctrl-C, a script's cleanup): the block setup's whole process
// group (a daemon, its mount) is stopped, the blocks' ready-file directory removed, and binder-ab
// exits with 128 + the signal, as the signal's default action would have reported it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/unit/tools/ab_test_dirs.h"
#include "tools/ab/block_experiment.h"
#include "tools/ab/stop_signals.h"

using namespace cused::tools::ab;
using namespace std::chrono_literals;

namespace {

// Runs `body` in a child that watches the stop signals as binder-ab's main does; its wait status.
template <typename Body>
int in_child(Body body) {
  pid_t child = fork();
  if (child == 0) {
    watch_stop_signals();
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// A killed process whose parent is gone may stay a zombie a while (or for good, where nothing
// reaps orphans): alive only if it is there and not a zombie.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text{std::istreambuf_iterator<char>(stat), {}};
  auto after_name = text.rfind(')');
  return after_name != std::string::npos && text.size() > after_name + 2 &&
         text[after_name + 2] != 'Z';
}

}  // namespace

TEST(AbStopSignals, ASignalRunsTheCleanupsNewestFirstAndExitsWith128PlusIt) {
  auto dir = test_dirs::scratch_dir("cused-ab-stop-");
  int status = in_child([&] {
    StopCleanup first([&] { std::ofstream(dir / "order", std::ios::app) << "first\n"; });
    StopCleanup second([&] { std::ofstream(dir / "order", std::ios::app) << "second\n"; });
    {
      StopCleanup gone([&] { std::ofstream(dir / "order", std::ios::app) << "gone\n"; });
    }
    kill(getpid(), SIGTERM);
    std::this_thread::sleep_for(10s);  // the watcher exits first
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  std::ifstream order(dir / "order");
  std::string text{std::istreambuf_iterator<char>(order), {}};
  EXPECT_EQ(text, "second\nfirst\n");  // the one whose scope ended did not run
  std::filesystem::remove_all(dir);
}

// The experiment stopped in its first block: the setup's group (the background sleep a daemon
// would be) is gone, and so is the ready file's directory.
TEST(AbStopSignals, SigintInABlockStopsItsSetupAndRemovesTheReadyFiles) {
  auto dir = test_dirs::scratch_dir("cused-ab-stop-");
  // The setup names its ready file: other tests' binder-ab directories may come and go beside.
  BlockPlan plan{.blocks = 2,
                 .setup = fmt::format("sleep 300 & echo $! > {0}/background; "
                                      "echo \"$CUSED_AB_READY\" > {0}/ready; "
                                      "touch \"$CUSED_AB_READY\"; wait",
                                      dir.string()),
                 .ready_limit = 20s,
                 .setup_signals_ready = true};
  int status = in_child([&] {
    auto prepare = [] { return std::pair{Variant{}, Variant{}}; };
    auto pairs = [&](const Variant&, const Variant&, const Schedule&, int) -> Measurements {
      kill(getpid(), SIGINT);
      std::this_thread::sleep_for(30s);  // the watcher exits first
      return {};
    };
    measure_blocks(plan, prepare, pairs, Schedule{});
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
  std::ifstream in(dir / "background");
  pid_t background = 0;
  ASSERT_TRUE(in >> background);
  EXPECT_FALSE(alive(background)) << "the setup's background process outlived binder-ab";
  std::ifstream named(dir / "ready");
  std::string ready_file;
  ASSERT_TRUE(std::getline(named, ready_file));
  auto ready_dir = std::filesystem::path(ready_file).parent_path();
  EXPECT_TRUE(ready_dir.filename().string().starts_with("binder-ab-")) << ready_file;
  EXPECT_FALSE(std::filesystem::exists(ready_dir)) << ready_dir << " outlived binder-ab";
  std::filesystem::remove_all(dir);
}
