// binder-ab's statistics on synthetic runs whose true B/A ratio is known: the interval must
// contain it about as often as it claims, contain 1.0 for identical variants, and exclude 1.0 for
// a 5 % shift once there are enough runs (the detection requirement).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "tools/ab/statistics.h"

namespace cused::tools::ab {
namespace {

// `count` runs of a throughput-like metric: `center` times lognormal noise of `spread` (sigma).
std::vector<double> runs(std::mt19937_64& random, std::size_t count, double center, double spread) {
  std::lognormal_distribution<double> noise(0, spread);
  std::vector<double> values;
  for (std::size_t i = 0; i < count; ++i) values.push_back(center * noise(random));
  return values;
}

TEST(AbQuantile, InterpolatesBetweenOrderStatistics) {
  std::vector<double> values{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median(values), 2.5);
  EXPECT_DOUBLE_EQ(quantile(values, 0), 1);
  EXPECT_DOUBLE_EQ(quantile(values, 1), 4);
  EXPECT_DOUBLE_EQ(quantile(values, 0.25), 1.75);
  EXPECT_THROW(median(std::vector<double>{}), std::invalid_argument);
}

TEST(AbSummary, MedianQuartilesMadAndSpread) {
  std::vector<double> values{10, 11, 12, 13, 100};  // one outlier
  auto summary = summarize(values);
  EXPECT_EQ(summary.count, 5u);
  EXPECT_DOUBLE_EQ(summary.median, 12);
  EXPECT_DOUBLE_EQ(summary.q1, 11);
  EXPECT_DOUBLE_EQ(summary.q3, 13);
  EXPECT_DOUBLE_EQ(summary.mad, 1);  // deviations 2 1 0 1 88
  EXPECT_DOUBLE_EQ(summary.relative_spread(), 2.0 / 12);
  EXPECT_DOUBLE_EQ(summary.min, 10);
  EXPECT_DOUBLE_EQ(summary.max, 100);
}

TEST(AbBootstrap, IdenticalVariantsGiveAnIntervalContainingOne) {
  std::mt19937_64 random(7);
  auto a = runs(random, 30, 14000, 0.03);
  auto b = runs(random, 30, 14000, 0.03);
  auto interval = bootstrap_ratio_of_medians(a, b);
  EXPECT_TRUE(interval.contains(1.0)) << interval.low << " " << interval.high;
  EXPECT_FALSE(judge(interval, Better::higher).detected);
  // --seed: the same runs and seed give the same interval.
  auto again = bootstrap_ratio_of_medians(a, b);
  EXPECT_EQ(again.low, interval.low);
  EXPECT_EQ(again.high, interval.high);
}

// Over many synthetic experiments with a true ratio of 1.05, the 95 % interval must contain 1.05
// in about 95 % of them (a percentile bootstrap of a median undercovers a little at small n).
TEST(AbBootstrap, IntervalCoversTheTrueRatioAtAboutItsConfidence) {
  std::mt19937_64 random(11);
  int experiments = 200, covered = 0;
  for (int e = 0; e < experiments; ++e) {
    auto a = runs(random, 25, 1000, 0.05);
    auto b = runs(random, 25, 1050, 0.05);
    BootstrapOptions options;
    options.resamples = 2000;
    options.seed = static_cast<std::uint64_t>(e);
    if (bootstrap_ratio_of_medians(a, b, options).contains(1.05)) ++covered;
  }
  EXPECT_GE(covered, experiments * 88 / 100);
  EXPECT_LE(covered, experiments * 99 / 100);
}

TEST(AbBootstrap, FivePercentShiftIsDetectedWithEnoughRuns) {
  std::mt19937_64 random(3);
  auto a = runs(random, 40, 14000, 0.03);
  auto b = runs(random, 40, 14000 * 0.95, 0.03);
  auto interval = bootstrap_ratio_of_medians(a, b);
  EXPECT_LT(interval.high, 1.0);
  EXPECT_GT(interval.low, 0.90);
  auto verdict = judge(interval, Better::higher);
  EXPECT_TRUE(verdict.detected);
  EXPECT_LT(verdict.improvement_percent, 0);
  EXPECT_NE(verdict.text.find("slower"), std::string::npos) << verdict.text;
  // The interval is printed in the verdict's direction: two positive slowdowns.
  EXPECT_EQ(verdict.text.find("CI -"), std::string::npos) << verdict.text;
}

// The design's reason for interleaving: a slow spell hits run i of A and of B alike. Resampling
// the pairs keeps the common factor out of the ratio; resampling each side alone does not.
TEST(AbBootstrap, PairedResamplingRemovesDriftSharedByAPair) {
  std::mt19937_64 random(5);
  std::lognormal_distribution<double> machine(0, 0.10), own(0, 0.01);
  std::vector<double> a, b;
  for (int i = 0; i < 30; ++i) {
    double load = machine(random);
    a.push_back(1000 * load * own(random));
    b.push_back(1030 * load * own(random));
  }
  BootstrapOptions paired, unpaired;
  unpaired.paired = false;
  auto with_pairs = bootstrap_ratio_of_medians(a, b, paired);
  auto without = bootstrap_ratio_of_medians(a, b, unpaired);
  EXPECT_LT(with_pairs.high - with_pairs.low, without.high - without.low);
  EXPECT_GT(with_pairs.low, 1.0);
}

TEST(AbBootstrap, RefusesInputsWithoutARatio) {
  std::vector<double> empty, zeros{0, 0, 0}, three{1, 2, 3}, two{1, 2};
  EXPECT_THROW(bootstrap_ratio_of_medians(empty, three), std::invalid_argument);
  EXPECT_THROW(bootstrap_ratio_of_medians(zeros, three), std::invalid_argument);
  EXPECT_THROW(bootstrap_ratio_of_medians(three, two), std::invalid_argument);  // pairs
  BootstrapOptions unpaired;
  unpaired.paired = false;
  EXPECT_NO_THROW(bootstrap_ratio_of_medians(three, two, unpaired));
}

TEST(AbVerdict, LowerIsBetterTurnsAFallingRatioIntoFaster) {
  RatioInterval latency{0.90, 0.85, 0.95, 0.95};
  auto verdict = judge(latency, Better::lower);
  EXPECT_TRUE(verdict.detected);
  EXPECT_NEAR(verdict.improvement_percent, 10, 1e-9);
  EXPECT_NEAR(verdict.low_percent, 5, 1e-9);
  EXPECT_NEAR(verdict.high_percent, 15, 1e-9);
  EXPECT_NE(verdict.text.find("B is 10.0 % faster"), std::string::npos) << verdict.text;
}

// A count of work is not a speed: fewer ioctls per call is "fewer", not "faster" (issue 35).
TEST(AbVerdict, ACountMetricIsWordedAsAnAmountOfIt) {
  RatioInterval ioctls{0.666, 0.660, 0.672, 0.95};
  auto fewer = judge(ioctls, Better::lower, Wording::amount, "ioctls per call");
  EXPECT_EQ(fewer.text, "B needs 33.4 % fewer ioctls per call (95 % CI 32.8 … 34.0 %)");
  EXPECT_EQ(fewer.brief, "B 33.4 % fewer");
  auto more =
      judge(RatioInterval{1.5, 1.4, 1.6, 0.95}, Better::lower, Wording::amount, "ioctls per call");
  EXPECT_EQ(more.text.rfind("B needs 50.0 % more ioctls per call", 0), 0u) << more.text;
  EXPECT_EQ(more.brief, "B 50.0 % more");
  EXPECT_EQ(judge(ioctls, Better::lower).brief, "B 33.4 % faster");
}

TEST(AbVerdict, DetectionNoteSaysWhetherTheTargetDifferenceWasResolved) {
  auto narrow = judge(RatioInterval{1.01, 0.98, 1.03, 0.95}, Better::higher);
  EXPECT_NE(detection_note(narrow, 5).find("ruled out"), std::string::npos);
  auto wide = judge(RatioInterval{1.01, 0.93, 1.09, 0.95}, Better::higher);
  EXPECT_NE(detection_note(wide, 5).find("could not resolve a 5 % difference"), std::string::npos);
  auto found = judge(RatioInterval{0.95, 0.93, 0.97, 0.95}, Better::higher);
  EXPECT_EQ(detection_note(found, 5), "resolved (target 5 %)");
}

}  // namespace
}  // namespace cused::tools::ab
