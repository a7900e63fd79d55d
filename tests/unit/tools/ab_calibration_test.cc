// SPDX-License-Identifier: GPL-2.0-only
// binder-ab calibrate (issue 46): the Wilson intervals docs/ab.md's calibration table quotes, an
// A/A record's re-analysis as measured (no verdict when A and B agree) and with B x 0.95 (a 5 %
// difference the runs resolve when their noise is small, not when it is large), and a record
// that is not an A/A experiment refused rather than counted as one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "tools/ab/calibration.h"
#include "tools/ab/report.h"

using namespace cused::tools::ab;

namespace {

// An A/A record of `pairs` pairs whose runs vary by `noise` (a share of 100) around 100.
nlohmann::json aa_record(int pairs, double noise, std::uint64_t seed, bool aa = true) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  Analysis analysis;
  analysis.name = "payload 0";
  analysis.aa = aa;
  analysis.seconds = 15;
  for (int i = 0; i < pairs; ++i) {
    analysis.runs_a.push_back(100 * (1 + jitter(random)));
    analysis.runs_b.push_back(100 * (1 + jitter(random)));
  }
  return to_json(analyze(std::move(analysis), BootstrapOptions{.resamples = 2000, .seed = seed}));
}

// Ten such records, seeds 1 to 10.
std::vector<nlohmann::json> ten_aa_records(int pairs, double noise) {
  std::vector<nlohmann::json> records;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) records.push_back(aa_record(pairs, noise, seed));
  return records;
}

}  // namespace

TEST(AbCalibration, WilsonIntervalsAreTheScoreIntervalsTheDocsQuote) {
  auto [low0, high0] = wilson_interval(0, 40);  // docs/ab.md: 0.0 % [0.0, 8.8]
  EXPECT_DOUBLE_EQ(low0, 0.0);
  EXPECT_NEAR(high0, 0.0876, 0.0005);
  auto [low15, high15] = wilson_interval(15, 40);  // 37.5 % [24.2, 53.0]
  EXPECT_NEAR(low15, 0.242, 0.0005);
  EXPECT_NEAR(high15, 0.530, 0.0005);
  auto [low40, high40] = wilson_interval(40, 40);  // 100.0 % [91.2, 100.0]
  EXPECT_NEAR(low40, 0.912, 0.0005);
  EXPECT_DOUBLE_EQ(high40, 1.0);
  EXPECT_THROW(wilson_interval(0, 0), std::invalid_argument);
}

TEST(AbCalibration, QuietRunsResolveAFivePercentDifferenceAndRarelyCallOneWhereThereIsNone) {
  auto row = calibration_row("payload 0", ten_aa_records(30, 0.001));
  EXPECT_EQ(row.experiments, 10);
  // A 95 % interval misses B/A = 1 in about one A/A experiment of twenty, however small the noise:
  // these seeds give 1 of 10; scaled by 0.95, every one resolves.
  EXPECT_LE(row.false_verdicts, 2);
  EXPECT_EQ(row.resolved_scaled, 10);
  EXPECT_LT(row.median_half_width, 0.5);
  EXPECT_EQ(row.seconds, 15);
}

TEST(AbCalibration, NoisyRunsDoNotResolveIt) {
  auto row = calibration_row("payload 0", ten_aa_records(12, 0.5));
  EXPECT_LE(row.resolved_scaled, 3);
  EXPECT_GT(row.median_half_width, 5);
  auto table = calibration_table({row});
  EXPECT_NE(table.find("| payload 0 (15 s, 1 block(s)) | 10 |"), std::string::npos) << table;
}

TEST(AbCalibration, ARecordThatIsNotAnAAExperimentIsRefused) {
  EXPECT_THROW(calibration_row("payload 0", {aa_record(12, 0.001, 1, false)}), std::runtime_error);
}
