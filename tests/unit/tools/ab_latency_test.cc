// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --latency's readings and verdicts: cused's precise percentiles are preferred to
// binderThroughputTest's bucket midpoints, a bucket line carries its bucket width, and runs whose
// medians the buckets cannot tell apart get "cannot resolve: ..." instead of a ratio such as
// B/A 1.000 [1.000, 1.000] printed as if it were measured (issue 29 point 3).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tools/ab/latency.h"
#include "tools/ab/report.h"

namespace cused::tools::ab {
namespace {

using namespace std::chrono_literals;

constexpr const char* kBucketLine = "50%: 0.195312 90%: 0.195312 95%: 0.585938 99%: 1.36719 \n";
constexpr const char* kPreciseLine =
    "precise latency percentiles (us, within 0.4 %): P50 23.4 P90 31 P99 58.25 P99.9 211\n";

// The reading of `percentile` in `output` is `value` ms with `resolution` (0: precise).
void expect_reading(const std::string& output, LatencyPercentile percentile,
                    const std::vector<std::string>& command, double value, double resolution) {
  auto reading = read_latency(output, percentile, command);
  ASSERT_TRUE(reading);
  EXPECT_DOUBLE_EQ(reading->value, value);
  EXPECT_DOUBLE_EQ(reading->resolution, resolution);
}

TEST(AbLatencyReading, PrefersThePreciseLine) {
  std::string output = std::string("iterations per sec: 9000\n") + kBucketLine + kPreciseLine;
  expect_reading(output, LatencyPercentile::p50, {"binder-throughput"}, 0.0234, 0);
  expect_reading(output, LatencyPercentile::p99, {"binder-throughput"}, 0.05825, 0);  // not P99.9
  expect_reading(output, LatencyPercentile::p90, {"binder-throughput"}, 0.031, 0);
  expect_reading(output, LatencyPercentile::p999, {"binder-throughput"}, 0.211, 0);
}

// The bucket line has 90 % but no 99.9 %: P90 comes with its bucket width, P99.9 not at all.
TEST(AbLatencyReading, TheBucketLineHasP90ButNoP999) {
  std::string output = std::string("iterations per sec: 9000\n") + kBucketLine;
  expect_reading(output, LatencyPercentile::p90, {"binderThroughputTest", "-m", "8000"}, 0.195312,
                 0.0625);
  EXPECT_FALSE(read_latency(output, LatencyPercentile::p999, {"binderThroughputTest"}));
}

// Google's binderThroughputTest: 128 buckets over -m (default 50 ms), or over twice the
// training round's worst latency, in whole nanoseconds.
TEST(AbLatencyReading, ABucketLineCarriesItsBucketWidth) {
  std::string output = std::string("iterations per sec: 9000\naverage:0.2ms\n") + kBucketLine;
  expect_reading(output, LatencyPercentile::p50, {"binderThroughputTest", "-w", "2"}, 0.195312,
                 0.390625);
  EXPECT_DOUBLE_EQ(bucket_width_ms(output, {"with-dev-binder", "/d", "bt", "-m", "8000"}), 0.0625);
  EXPECT_DOUBLE_EQ(bucket_width_ms(output, {"binder-throughput", "-m2000"}), 0.015625);
  EXPECT_DOUBLE_EQ(
      bucket_width_ms("Max latency during training: 1.5ms\n" + output, {"bt", "-t", "-m", "8000"}),
      0.023437);
  EXPECT_FALSE(read_latency("iterations per sec: 1\n", LatencyPercentile::p50, {"bt"}));
}

SecondaryMetric latency(std::vector<double> a, std::vector<double> b, double resolution) {
  SecondaryMetric metric;
  metric.name = "P50 latency (ms)";
  metric.unit = "ms";
  metric.resolution = resolution;
  metric.runs_a = std::move(a);
  metric.runs_b = std::move(b);
  return metric;
}

Analysis with_secondary(SecondaryMetric metric) {
  Analysis analysis;
  analysis.name = "payload 0";
  analysis.metric_name = "iterations per sec";
  for (int i = 0; i < 12; ++i) {
    analysis.runs_a.push_back(9000 + 10 * (i % 3));
    analysis.runs_b.push_back(9100 + 10 * (i % 4));
  }
  analysis.secondary.push_back(std::move(metric));
  BootstrapOptions bootstrap;
  bootstrap.resamples = 2000;
  return analyze(analysis, bootstrap);
}

// quickstart's rows: every run of both in the first 0.0625 ms bucket.
TEST(AbQuantizedVerdict, BothMediansInOneBucketCannotResolve) {
  auto analysis = with_secondary(
      latency(std::vector<double>(12, 0.03125), std::vector<double>(12, 0.03125), 0.0625));
  const auto& metric = analysis.secondary[0];
  EXPECT_TRUE(metric.verdict.unresolved);
  EXPECT_FALSE(metric.verdict.detected);
  EXPECT_EQ(metric.verdict.text, "cannot resolve: both in one 0.0625 ms bucket");
  auto line = secondary_line(analysis, metric);
  EXPECT_EQ(line,
            "payload 0, P50 latency (ms), in 0.0625 ms buckets: cannot resolve: both in one "
            "0.0625 ms bucket (medians A 0.03125, B 0.03125)\n");
  EXPECT_EQ(line.find("[1.000, 1.000]"), std::string::npos);
  EXPECT_NE(svg_plot(analysis).find("cannot resolve: both in one 0.0625 ms bucket"),
            std::string::npos);
}

// docs/reproductions.md's alloc-lock P50: B's median run one bucket below A's; the interval
// [0.455, 0.778] ends at its point 7/9, a ratio of midpoints, which printed "B is 22.2 % faster".
TEST(AbQuantizedVerdict, AnIntervalEndingAtItsPointCannotResolve) {
  std::vector<double> a, b;
  for (int i = 0; i < 12; ++i) {
    a.push_back(i < 9 ? 0.28125 : 0.34375);
    b.push_back(i < 7 ? 0.21875 : i < 10 ? 0.15625 : 0.28125);
  }
  auto analysis = with_secondary(latency(a, b, 0.0625));
  const auto& metric = analysis.secondary[0];
  ASSERT_DOUBLE_EQ(metric.interval.ratio, 0.21875 / 0.28125);
  EXPECT_TRUE(metric.verdict.unresolved) << metric.verdict.text;
  EXPECT_NE(metric.verdict.text.find("cannot resolve: the medians are 1 bucket(s) of 0.0625 ms"),
            std::string::npos)
      << metric.verdict.text;
}

TEST(AbQuantizedVerdict, MediansLessThanABucketApartCannotResolve) {
  std::vector<double> a(12, 0.28125), b(12, 0.28125);
  for (int i = 6; i < 12; ++i) b[i] = 0.34375;  // B's median between two midpoints
  auto analysis = with_secondary(latency(a, b, 0.0625));
  EXPECT_EQ(analysis.secondary[0].verdict.text,
            "cannot resolve: the medians are less than one 0.0625 ms bucket apart");
}

// Every run of A in bucket 20, of B in bucket 10: the interval is the point, but no placement
// within the buckets makes B/A 1, so the verdict stands with the range the buckets allow.
TEST(AbQuantizedVerdict, ManyBucketsApartStandsEvenWhenTheIntervalIsThePoint) {
  auto analysis = with_secondary(
      latency(std::vector<double>(12, 1.28125), std::vector<double>(12, 0.65625), 0.0625));
  const auto& verdict = analysis.secondary[0].verdict;
  EXPECT_FALSE(verdict.unresolved);
  EXPECT_TRUE(verdict.detected);
  EXPECT_NE(verdict.text.find("the buckets alone put B/A in [0.476, 0.550]"), std::string::npos)
      << verdict.text;
}

// Runs spread over many buckets with a clear shift: the buckets resolve it and the verdict
// stands, naming them.
TEST(AbQuantizedVerdict, ADifferenceOfManyBucketsStands) {
  std::vector<double> a, b;
  for (int i = 0; i < 12; ++i) {
    a.push_back(0.0625 * (20 + i % 5) + 0.03125);
    b.push_back(0.0625 * (10 + i % 4) + 0.03125);
  }
  auto analysis = with_secondary(latency(a, b, 0.0625));
  const auto& verdict = analysis.secondary[0].verdict;
  EXPECT_FALSE(verdict.unresolved);
  EXPECT_TRUE(verdict.detected);
  EXPECT_NE(verdict.text.find("B is "), std::string::npos) << verdict.text;
  EXPECT_NE(verdict.text.find("(in 0.0625 ms buckets)"), std::string::npos) << verdict.text;
  auto replayed = from_json(to_json(analysis));
  EXPECT_EQ(replayed.secondary[0].resolution, 0.0625);
  EXPECT_EQ(replayed.secondary[0].unit, "ms");
}

// Precise runs keep the plain verdict, however equal their medians.
TEST(AbQuantizedVerdict, PreciseRunsAreJudgedAsMeasured) {
  auto analysis =
      with_secondary(latency(std::vector<double>(12, 0.0231), std::vector<double>(12, 0.0231), 0));
  const auto& metric = analysis.secondary[0];
  EXPECT_FALSE(metric.verdict.unresolved);
  EXPECT_EQ(secondary_line(analysis, metric).rfind("payload 0, P50 latency (ms): B/A 1.000", 0),
            0u);
}

// binder-ab itself on shell workloads (no device): the precise line wins over the bucket line,
// and a bucket line alone gets the bucket width and "cannot resolve". Both fail on the binder-ab
// that read only the bucket line.
std::string run_binder_ab(const std::string& script) {
  const char* binary = std::getenv("BINDER_AB_BINARY");
  EXPECT_NE(binary, nullptr);
  auto result = run_command(
      {binary, "--latency", "--runs", "8", "--warmup", "0", "--progress", "none", "--name", "shell",
       "/variant-a", "/variant-b", "--", "sh", "-c", script, "sh", "-m", "8000"},
      60s);
  EXPECT_TRUE(result.succeeded()) << result.output;
  return result.output;
}

TEST(AbLatencyTool, ReadsThePreciseLineWhenThereIsOne) {
  auto output = run_binder_ab(
      "case {label} in /variant-a) p=20;; *) p=30;; esac; echo 'iterations per sec: 100'; "
      "echo '50%: 0.03125 90%: 0.03125 95%: 0.03125 99%: 0.03125 '; "
      "echo \"precise latency percentiles (us, within 0.4 %): P50 $p P90 40 P99 $p P99.9 90\"");
  EXPECT_NE(output.find("shell, P50 latency (ms): B/A 1.500 [1.500, 1.500]; B is 50.0 % slower"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("buckets"), std::string::npos) << output;
}

// Issue 29 point 3: every exact percentile binder-throughput prints gets its panel.
TEST(AbLatencyTool, ThePreciseLineGivesP50P90P99AndP999Panels) {
  auto output = run_binder_ab(
      "case {label} in /variant-a) p=20;; *) p=30;; esac; echo 'iterations per sec: 100'; "
      "echo \"precise latency percentiles (us, within 0.4 %): P50 10 P90 $p P99 40 P99.9 $p\"");
  EXPECT_NE(output.find("shell, P90 latency (ms): B/A 1.500 [1.500, 1.500]; B is 50.0 % slower"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("shell, P99.9 latency (ms): B/A 1.500 [1.500, 1.500]; B is 50.0 % slower"),
            std::string::npos)
      << output;
}

// binderThroughputTest prints no 99.9 %: no P99.9 panel, the others as before.
TEST(AbLatencyTool, ABucketLineAloneGetsNoP999Panel) {
  auto output = run_binder_ab(
      "echo 'iterations per sec: 100'; "
      "echo '50%: 0.03125 90%: 0.03125 95%: 0.03125 99%: 0.09375 '");
  EXPECT_NE(output.find("shell, P90 latency (ms)"), std::string::npos) << output;
  EXPECT_EQ(output.find("P99.9"), std::string::npos) << output;
}

// A percentile printed in some runs only is a broken workload, not a panel with holes.
TEST(AbLatencyTool, AP999InSomeRunsOnlyIsAnError) {
  const char* binary = std::getenv("BINDER_AB_BINARY");
  ASSERT_NE(binary, nullptr);
  auto result = run_command(
      {binary, "--latency", "--runs", "8", "--warmup", "0", "--progress", "none", "/variant-a",
       "/variant-b", "--", "sh", "-c",
       "echo 'iterations per sec: 100'; case {label} in /variant-a) "
       "echo 'precise latency percentiles (us, within 0.4 %): P50 1 P90 2 P99 3 P99.9 4';; "
       "*) echo 'precise latency percentiles (us, within 0.4 %): P50 1 P90 2 P99 3';; esac"},
      60s);
  EXPECT_FALSE(result.succeeded());
  EXPECT_NE(result.output.find("P99.9 latency (ms): printed in 8 of 16 runs only"),
            std::string::npos)
      << result.output;
}

TEST(AbLatencyTool, SaysWhenTheBucketsCannotResolve) {
  auto output = run_binder_ab(
      "echo 'iterations per sec: 100'; "
      "echo '50%: 0.03125 90%: 0.03125 95%: 0.03125 99%: 0.09375 '");
  auto p50_at = output.find("shell, P50 latency (ms)");
  ASSERT_NE(p50_at, std::string::npos) << output;
  auto p50_line = output.substr(p50_at, output.find('\n', p50_at) - p50_at);
  EXPECT_EQ(p50_line,
            "shell, P50 latency (ms), in 0.0625 ms buckets: cannot resolve: both in one 0.0625 ms "
            "bucket (medians A 0.03125, B 0.03125)");
}

}  // namespace
}  // namespace cused::tools::ab
