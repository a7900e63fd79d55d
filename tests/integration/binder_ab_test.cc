// SPDX-License-Identifier: GPL-2.0-only
// tools/binder-ab against cused (issue 6): binder-throughput on two identical devices, interleaved;
// the B/A interval must contain 1.0, the JSON and SVG outputs must hold every run, and --latency
// reads its precise percentiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

using namespace std::chrono_literals;

class BinderAbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two devices of the same (default) variant, each with its own service manager.
    for (const char* device : {"binder", "hwbinder"})
      servicemanagers_.push_back(std::make_unique<testing::ToolProcess>(std::vector<std::string>{
          testing::binary_from_env("SERVICEMANAGER_BINARY"), "--device", mount_.path(device)}));
    out_dir_ = testing::make_temp_dir("binder-ab-test-");
  }
  void TearDown() override { std::filesystem::remove_all(out_dir_); }

  // binder-ab with `options` on the two devices, its workload binder-throughput -w 2 -i N.
  testing::ToolProcess::Result run_ab(std::vector<std::string> options, const char* iterations) {
    std::vector<std::string> argv{testing::binary_from_env("BINDER_AB_BINARY")};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {mount_.path("binder"), mount_.path("hwbinder"), "--",
                             testing::binary_from_env("BINDER_THROUGHPUT_BINARY"), "--device",
                             "{dev}", "-w", "2", "-i", iterations});
    testing::ToolProcess tool(argv);
    return tool.finish(60s);
  }

  testing::MountedBinderfs mount_;
  std::vector<std::unique_ptr<testing::ToolProcess>> servicemanagers_;
  std::string out_dir_;
};

// A/A: the same variant twice, so a miss of 1.0 means the tool mixes up its runs, pairs or
// ratio. The percentile bootstrap is only nominal for enough runs: with 8 pairs its 99.9 %
// interval missed 1.0 from timing noise alone in 1 of 60 repeats of this test on a loaded
// machine (`meson test binder-ab --repeat 60 --num-processes 1` with a busy loop beside it);
// with 24 pairs, 70 of 70 such runs passed.
TEST_F(BinderAbTest, IdenticalDevicesGiveARatioIntervalContainingOne) {
  constexpr int kPairs = 24;
  std::string json = out_dir_ + "/ab.json", svg = out_dir_ + "/ab.svg";
  auto result = run_ab({"--runs", std::to_string(kPairs), "--confidence", "0.999", "--seed", "1",
                        "--name", "A/A", "--json", json, "--svg", svg},
                       "300");
  ASSERT_FALSE(result.timed_out) << result.output;
  ASSERT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0) << result.output;

  // | A/A | 24+24 | A median | B median | ratio | [low, high] | ...
  std::smatch row;
  ASSERT_TRUE(std::regex_search(
      result.output, row,
      std::regex(R"(\| A/A \| )" + std::to_string(kPairs) + R"(\+)" + std::to_string(kPairs) +
                 R"( \| ([0-9.e+]+) \| ([0-9.e+]+) \| ([0-9.]+) \| \[([0-9.]+), ([0-9.]+)\])")))
      << result.output;
  double ratio = std::stod(row[3]), low = std::stod(row[4]), high = std::stod(row[5]);
  EXPECT_GT(std::stod(row[1]), 0);
  EXPECT_LE(low, 1.0) << result.output;
  EXPECT_GE(high, 1.0) << result.output;
  EXPECT_LE(low, ratio);
  EXPECT_GE(high, ratio);
  EXPECT_NE(result.output.find("no difference detected at 99.9 %"), std::string::npos)
      << result.output;

  std::ifstream json_in(json);
  auto record = nlohmann::json::parse(json_in);
  EXPECT_EQ(record["a"]["runs"].size(), static_cast<std::size_t>(kPairs));
  EXPECT_EQ(record["b"]["runs"].size(), static_cast<std::size_t>(kPairs));
  EXPECT_EQ(record["a"]["device"], mount_.path("binder"));
  EXPECT_EQ(record["warmup_pairs"], 1);
  // The ratio is the runs' own: median(B) / median(A) of what the JSON says was measured.
  auto median = [](std::vector<double> runs) {
    std::sort(runs.begin(), runs.end());
    return (runs[kPairs / 2 - 1] + runs[kPairs / 2]) / 2;
  };
  EXPECT_NEAR(median(record["b"]["runs"].get<std::vector<double>>()) /
                  median(record["a"]["runs"].get<std::vector<double>>()),
              ratio, 0.0006);
  EXPECT_NEAR(record["ratio"]["low"].get<double>(), low, 0.0006);
  EXPECT_NEAR(record["ratio"]["high"].get<double>(), high, 0.0006);
  std::ifstream svg_in(svg);
  std::string plot((std::istreambuf_iterator<char>(svg_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(plot.find("<svg"), std::string::npos);
  std::size_t dots = 0;
  for (auto at = plot.find("<circle"); at != std::string::npos; at = plot.find("<circle", at + 1))
    ++dots;
  EXPECT_EQ(dots, 2u * kPairs);  // a dot a run
}

// --latency on cused's binder-throughput (issue 29 point 3): the panels are its precise
// percentiles, not bucket midpoints. With -m's default every call of this machine falls into
// the first 0.390625 ms bucket, whose midpoint 0.195312 the old reading gave for every run.
TEST_F(BinderAbTest, LatencyPanelsReadBinderThroughputsPrecisePercentiles) {
  std::string json = out_dir_ + "/latency.json";
  auto result = run_ab(
      {"--runs", "8", "--latency", "--progress", "none", "--name", "latency", "--json", json},
      "200");
  ASSERT_FALSE(result.timed_out) << result.output;
  ASSERT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0) << result.output;
  EXPECT_NE(result.output.find("latency, P50 latency (ms): B/A "), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("buckets"), std::string::npos) << result.output;
  std::ifstream json_in(json);
  auto record = nlohmann::json::parse(json_in);
  ASSERT_EQ(record["secondary"].size(), 4u);  // P50, P90, P99 and P99.9, all from the precise line
  for (const auto& metric : record["secondary"]) {
    EXPECT_EQ(metric.value("resolution", -1.0), 0.0) << metric.dump();
    // A precise percentile may land on a midpoint by chance; all 16 of them do only if they are
    // midpoints.
    std::size_t midpoints = 0, runs = 0;
    for (const char* side : {"a", "b"})
      for (double ms : metric[side]["runs"].get<std::vector<double>>()) {
        double buckets = ms / 0.390625 - 0.5;
        midpoints += std::abs(buckets - std::round(buckets)) < 1e-4;
        ++runs;
      }
    EXPECT_EQ(runs, 16u);
    EXPECT_LT(midpoints, runs) << metric.dump();
  }
}

// A workload that fails is an error with its output, never a data point.
TEST_F(BinderAbTest, FailingWorkloadIsReportedNotMeasured) {
  testing::ToolProcess tool({testing::binary_from_env("BINDER_AB_BINARY"), "--runs", "8",
                             mount_.path("binder"), mount_.path("nonexistent"), "--",
                             testing::binary_from_env("BINDER_THROUGHPUT_BINARY"), "--device",
                             "{dev}", "-w", "2", "-i", "10"});
  auto result = tool.finish(30s);
  ASSERT_FALSE(result.timed_out);
  EXPECT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) != 0);
  EXPECT_EQ(result.output.find("| "), std::string::npos) << result.output;
}

constexpr const char* kDefaultVariant =
    "alloc_lock=mutex,pages=eager,lock_policy=barging,defer_complete=on,exec_context=caller,"
    "install_latency_us=0";

// A label whose SPEC the device does not have is refused before anything runs, naming the label
// and the device's real variant: a table must not print one variant's numbers under another's name.
TEST_F(BinderAbTest, ALabelTheDeviceDoesNotMatchIsRefusedWithBoth) {
  testing::ToolProcess tool({testing::binary_from_env("BINDER_AB_BINARY"), "--mount", mount_.dir(),
                             "--runs", "8", "binder:defer_complete=off", "hwbinder", "--",
                             testing::binary_from_env("BINDER_THROUGHPUT_BINARY"), "--device",
                             "{dev}", "-w", "2", "-i", "10"},
                            testing::ToolProcess::Capture::stdout_and_stderr);
  auto result = tool.finish(30s);
  EXPECT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 1) << result.output;
  EXPECT_EQ(result.output, "binder-ab: A is labelled binder:defer_complete=off, but " +
                               mount_.path("binder") + " has " + kDefaultVariant +
                               "; change it (binderctl set) or the label\n");
}

// The row's default name keeps "{dev}" (not "--device -w 2", which reads as a missing argument),
// and the header shows each device's full variant beside a label that holds.
TEST_F(BinderAbTest, TheRowNameKeepsTheDevicePlaceholderAndTheHeaderTheFullVariants) {
  testing::ToolProcess tool({testing::binary_from_env("BINDER_AB_BINARY"), "--mount", mount_.dir(),
                             "--runs", "8", "--warmup", "0", "--progress", "none",
                             "binder:defer_complete=on", mount_.path("hwbinder"), "--",
                             testing::binary_from_env("BINDER_THROUGHPUT_BINARY"), "--device",
                             "{dev}", "-w", "2", "-i", "50"});
  auto result = tool.finish(60s);
  ASSERT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0) << result.output;
  EXPECT_NE(result.output.find("A = binder:defer_complete=on (" + mount_.path("binder") +
                               "): " + kDefaultVariant + "\n"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("B = " + mount_.path("hwbinder") + ": " + kDefaultVariant + "\n"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("| binder-throughput --device {dev} -w 2 -i 50 | 8+8 |"),
            std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace cused
