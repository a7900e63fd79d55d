// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's statistics on synthetic runs whose true B/A ratio is known: the interval must
// contain it about as often as it claims, contain 1.0 for identical variants, and exclude 1.0 for
// a 5 % shift once there are enough runs (the detection requirement).
#include <gtest/gtest.h>

#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <cstdio>
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

// The counts a binomial(experiments, p) lands within 95 % of the time (rounded outwards): the band
// a coverage count of `experiments` intervals at confidence p must fall in.
std::pair<int, int> binomial_95_band(int experiments, double p) {
  boost::math::binomial_distribution<double> counts(experiments, p);
  return {static_cast<int>(boost::math::quantile(counts, 0.025)),
          static_cast<int>(boost::math::quantile(counts, 0.975))};
}

// Over many synthetic experiments with a true ratio of 1.05, the 95 % interval must contain 1.05
// as often as 95 % coverage allows: within the binomial 95 % band of the experiment count.
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
  auto [low, high] = binomial_95_band(experiments, 0.95);
  std::printf("covered %d of %d (binomial 95 %% band at p = 0.95: %d to %d)\n", covered,
              experiments, low, high);
  EXPECT_GE(covered, low);
  EXPECT_LE(covered, high);
}

// kMinPairsForVerdict's reason: A/A experiments (B and A drawn alike) at each pair count, and how
// often judge() says "B is X % faster/slower" anyway. The minimum is the first count from which
// that rate stays at or below 6 % (the bootstrap's nominal 5 % and the simulation's noise); the
// count below it must be over 6 %, so that the minimum is not higher than it needs to be.
double false_verdict_rate(std::size_t pairs, int experiments) {
  std::mt19937_64 random(100 + pairs);
  int verdicts = 0;
  for (int e = 0; e < experiments; ++e) {
    auto a = runs(random, pairs, 1000, 0.05);
    auto b = runs(random, pairs, 1000, 0.05);
    BootstrapOptions options;
    options.resamples = 1000;
    options.seed = static_cast<std::uint64_t>(e + 1);
    // What judge() would call a difference without the minimum: an interval that misses 1.0.
    if (!bootstrap_ratio_of_medians(a, b, options).contains(1.0)) ++verdicts;
  }
  return static_cast<double>(verdicts) / experiments;
}

TEST(AbVerdict, MinimumPairsIsWhereIdenticalVariantsGetAtMostSixPercentVerdicts) {
  constexpr int kExperiments = 4000;
  constexpr std::size_t kLargest = 10;
  std::printf("A/A false-verdict rate over %d experiments (1000 resamples each):\n", kExperiments);
  std::size_t first_good = 0;
  for (std::size_t pairs = 3; pairs <= kLargest; ++pairs) {
    double rate = false_verdict_rate(pairs, kExperiments);
    std::printf("  %2zu pairs: %4.1f %%\n", pairs, rate * 100);
    if (rate > 0.06)
      first_good = 0;
    else if (first_good == 0)
      first_good = pairs;
  }
  EXPECT_EQ(first_good, kMinPairsForVerdict)
      << "the rate must stay <= 6 % from kMinPairsForVerdict to " << kLargest << " pairs";
}

TEST(AbVerdict, FewerPairsThanTheMinimumGetNoVerdict) {
  RatioInterval clear_shift{0.80, 0.70, 0.90, 0.95, kMinPairsForVerdict - 1};
  auto verdict = judge(clear_shift, Better::higher);
  EXPECT_TRUE(verdict.too_few_pairs);
  EXPECT_FALSE(verdict.detected);
  EXPECT_EQ(verdict.text.find("slower"), std::string::npos) << verdict.text;
  EXPECT_NE(verdict.text.find("too few pairs"), std::string::npos) << verdict.text;
  clear_shift.pairs = kMinPairsForVerdict;
  EXPECT_TRUE(judge(clear_shift, Better::higher).detected);
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
  RatioInterval latency{0.90, 0.85, 0.95, 0.95, kMinPairsForVerdict};
  auto verdict = judge(latency, Better::lower);
  EXPECT_TRUE(verdict.detected);
  EXPECT_NEAR(verdict.improvement_percent, 10, 1e-9);
  EXPECT_NEAR(verdict.low_percent, 5, 1e-9);
  EXPECT_NEAR(verdict.high_percent, 15, 1e-9);
  EXPECT_NE(verdict.text.find("B is 10.0 % faster"), std::string::npos) << verdict.text;
}

// A count of work is not a speed: fewer ioctls per call is "fewer", not "faster" (issue 35).
TEST(AbVerdict, ACountMetricIsWordedAsAnAmountOfIt) {
  RatioInterval ioctls{0.666, 0.660, 0.672, 0.95, kMinPairsForVerdict};
  auto fewer = judge(ioctls, Better::lower, Wording::amount, "ioctls per call");
  EXPECT_EQ(fewer.text, "B needs 33.4 % fewer ioctls per call (95 % CI 32.8 … 34.0 %)");
  EXPECT_EQ(fewer.brief, "B 33.4 % fewer");
  auto more = judge(RatioInterval{1.5, 1.4, 1.6, 0.95, kMinPairsForVerdict}, Better::lower,
                    Wording::amount, "ioctls per call");
  EXPECT_EQ(more.text.rfind("B needs 50.0 % more ioctls per call", 0), 0u) << more.text;
  EXPECT_EQ(more.brief, "B 50.0 % more");
  EXPECT_EQ(judge(ioctls, Better::lower).brief, "B 33.4 % faster");
}

TEST(AbVerdict, DetectionNoteSaysWhetherTheTargetDifferenceWasResolved) {
  auto narrow = judge(RatioInterval{1.01, 0.98, 1.03, 0.95, kMinPairsForVerdict}, Better::higher);
  EXPECT_NE(detection_note(narrow, 5).find("ruled out"), std::string::npos);
  auto wide = judge(RatioInterval{1.01, 0.93, 1.09, 0.95, kMinPairsForVerdict}, Better::higher);
  EXPECT_NE(detection_note(wide, 5).find("could not resolve a 5 % difference"), std::string::npos);
  auto found = judge(RatioInterval{0.95, 0.93, 0.97, 0.95, kMinPairsForVerdict}, Better::higher);
  EXPECT_EQ(detection_note(found, 5), "resolved (target 5 %)");
}

}  // namespace
}  // namespace cused::tools::ab
