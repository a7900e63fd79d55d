// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's progress (issue 21): the line's content from a state, and the real tool's lines in a
// short run whose stderr is not a terminal (a plain line every --progress-every seconds, then the
// final one), with a workload that needs no binder device: a shell printing a known metric.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "tools/ab/progress.h"
#include "tools/ab/workload.h"

namespace cused::tools::ab {
namespace {

using namespace std::chrono_literals;

TEST(AbProgressLine, WarmUpThenPairsElapsedBudgetRatioAndInterval) {
  ProgressState state{.name = "payload 0", .warmup_total = 1, .budget = 60s};
  state.elapsed = 0.4s;
  EXPECT_EQ(progress_line(state, progress_interval(state)), "payload 0: warm-up 1/1, 0 s / 60 s");
  state.warmup_done = 1;
  state.a = {100, 100};
  state.b = {110, 110};
  state.elapsed = 2.2s;
  EXPECT_EQ(progress_line(state, progress_interval(state)),
            "payload 0: 2 pairs, 2 s / 60 s, B/A 1.100 (CI from 3 pairs)");
  state.a = {100, 100, 100};
  state.b = {110, 110, 110};
  EXPECT_EQ(progress_line(state, progress_interval(state)),
            "payload 0: 3 pairs, 2 s / 60 s, B/A 1.100, 95 % CI [1.100, 1.100]");
  state.planned_pairs = 24;  // --runs: a count, not a budget
  EXPECT_EQ(progress_line(state, progress_interval(state)),
            "payload 0: 3/24 pairs, 2 s, B/A 1.100, 95 % CI [1.100, 1.100]");
}

TEST(AbProgressLine, AZeroMedianOfAIsSaidNotThrown) {
  ProgressState state{.name = "errors", .budget = 10s};
  state.a = {0, 0, 0};
  state.b = {1, 1, 1};
  EXPECT_EQ(progress_interval(state), std::nullopt);
  EXPECT_EQ(progress_line(state, std::nullopt),
            "errors: 3 pairs, 0 s / 10 s, B/A - (median of A is 0)");
}

TEST(AbProgressMode, AutoIsLiveOnlyOnATerminal) {
  EXPECT_EQ(parse_progress_mode("auto", true), ProgressMode::live);
  EXPECT_EQ(parse_progress_mode("auto", false), ProgressMode::plain);
  EXPECT_EQ(parse_progress_mode("none", true), ProgressMode::none);
  EXPECT_EQ(parse_progress_mode("sometimes", true), std::nullopt);
}

// binder-ab itself, 4 s at one line a second: stderr is a pipe here, so auto means plain lines.
// A prints 100, B 110 ({label} is the variant's path), so every line with an interval says 1.100.
TEST(AbProgressTool, PlainLinesAppearDuringARunThatIsNotOnATerminal) {
  const char* binary = std::getenv("BINDER_AB_BINARY");
  ASSERT_NE(binary, nullptr);
  auto result = run_command({binary, "--time", "4", "--progress-every", "1", "--name", "shell",
                             "/variant-a", "/variant-b", "--", "sh", "-c",
                             "sleep 0.1; case {label} in /variant-a) v=100;; *) v=110;; esac; "
                             "echo \"iterations per sec: $v\""},
                            30s);
  ASSERT_TRUE(result.succeeded()) << result.output;
  std::regex periodic(R"(binder-ab: shell: (\d+) pairs?, (\d) s / 4 s, B/A 1\.100.*\n)");
  std::vector<int> seconds;
  for (std::sregex_iterator it(result.output.begin(), result.output.end(), periodic), end;
       it != end; ++it)
    seconds.push_back(std::stoi((*it)[2]));
  // Lines at 1, 2 and 3 s, each later than the one before, and the final one.
  ASSERT_GE(seconds.size(), 3u) << result.output;
  for (std::size_t i = 1; i < seconds.size(); ++i) EXPECT_GE(seconds[i], seconds[i - 1]);
  EXPECT_TRUE(std::regex_search(
      result.output, std::regex(R"(binder-ab: shell: \d+ pairs, \d s / 4 s, B/A 1\.100, 95 % CI )"
                                R"(\[1\.100, 1\.100\] \(done\)\n)")))
      << result.output;
  // The table on stdout is unchanged by it.
  EXPECT_NE(result.output.find("| shell | "), std::string::npos) << result.output;
}

TEST(AbProgressTool, LiveModeRedrawsOneLine) {
  const char* binary = std::getenv("BINDER_AB_BINARY");
  ASSERT_NE(binary, nullptr);
  auto result = run_command({binary, "--runs", "8", "--progress", "live", "--name", "shell", "/a",
                             "/b", "--", "sh", "-c", "sleep 0.25; echo 'iterations per sec: 7'"},
                            30s);
  ASSERT_TRUE(result.succeeded()) << result.output;
  // Redrawn with a carriage return and cleared to the end of the line, ended by a newline.
  EXPECT_NE(result.output.find("\rshell: "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("\rshell: 8/8 pairs, "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("\x1b[K\n"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("binder-ab: shell"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace cused::tools::ab
