// SPDX-License-Identifier: GPL-2.0-only
// binder-ab with Google's binderThroughputTest as the workload (issue 17): the program opens
// /dev/binder only, so binder-ab --dev-binder runs it where /dev/binder is each variant's device.
// Each variant's service manager must have seen exactly its own runs' workers register.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

using namespace std::chrono_literals;

// The value of `counter` in proc `pid`'s block of binder_logs/stats (0 if it is not there: the
// kernel's format prints only the counters that are not zero).
long ProcCounter(const std::string& stats, pid_t pid, const std::string& counter) {
  std::istringstream lines(stats);
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line.rfind("proc ", 0) == 0) inside = line == "proc " + std::to_string(pid);
    if (inside && line.rfind("  " + counter + ": ", 0) == 0)
      return std::stol(line.substr(counter.size() + 4));
  }
  return 0;
}

TEST(BinderAbAosp, BinderThroughputTestRunsOnEachVariantsDevice) {
  constexpr int kRuns = 8, kWarmup = 1, kWorkers = 2;  // 8: the fewest --runs binder-ab takes
  testing::MountedBinderfs mount;
  testing::ToolProcess manager_a(
      {testing::binary_from_env("SERVICEMANAGER_BINARY"), "--device", mount.path("binder")});
  testing::ToolProcess manager_b(
      {testing::binary_from_env("SERVICEMANAGER_BINARY"), "--device", mount.path("hwbinder")});
  testing::ToolProcess tool({testing::binary_from_env("BINDER_AB_BINARY"), "--dev-binder", "--runs",
                             std::to_string(kRuns), "--warmup", std::to_string(kWarmup),
                             mount.path("binder"), mount.path("hwbinder"), "--",
                             testing::binary_from_env("BINDER_THROUGHPUT_TEST_BINARY"), "-w",
                             std::to_string(kWorkers), "-i", "300"});
  auto result = tool.finish(120s);
  ASSERT_FALSE(result.timed_out) << result.output;
  ASSERT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0) << result.output;
  // The row is named for Google's program, not for the helper that ran it.
  EXPECT_TRUE(std::regex_search(result.output,
                                std::regex(R"(\| binderThroughputTest -w 2 -i 300 \| 8\+8 \| )")))
      << result.output;

  std::ifstream in(mount.path("binder_logs/stats"));
  std::string stats((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Every worker registers with its device's manager, which then watches it for death.
  for (pid_t manager : {manager_a.pid(), manager_b.pid()})
    EXPECT_EQ(ProcCounter(stats, manager, "BC_REQUEST_DEATH_NOTIFICATION"),
              (kRuns + kWarmup) * kWorkers)
        << stats;
}

}  // namespace
}  // namespace cused
