// SPDX-License-Identifier: GPL-2.0-only
// The two-level bootstrap over blocks (issue 29) on synthetic experiments with a known
// between-block variance: each block (a daemon start) shifts the level of both variants and B/A
// itself by a random amount, as placement, memcg state or the hogs' phase would. The pairwise
// interval over all pairs then covers the true ratio far less often than it claims; the interval
// over blocks must not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "tools/ab/block_bootstrap.h"

namespace cused::tools::ab {
namespace {

struct Setting {
  int blocks = 5, pairs = 10;
  double ratio = 1.05;        // the true B/A: the median over blocks of a block's B/A
  double block_ratio = 0.05;  // sigma of log B/A between blocks: the heterogeneity
  double block_level = 0.10;  // sigma of the log level a block shifts A and B by alike
  double pair_load = 0.05;    // sigma of the log load that run i of A and of B share
  double own = 0.03;          // sigma of each run's own log noise
};

std::vector<Block> experiment(std::mt19937_64& random, const Setting& setting) {
  std::normal_distribution<double> z(0, 1);
  std::vector<Block> blocks(static_cast<std::size_t>(setting.blocks));
  for (Block& block : blocks) {
    double level = std::exp(setting.block_level * z(random));
    double shift = std::exp(setting.block_ratio * z(random));
    for (int i = 0; i < setting.pairs; ++i) {
      double load = 1000 * level * std::exp(setting.pair_load * z(random));
      block.a.push_back(load * std::exp(setting.own * z(random)));
      block.b.push_back(load * setting.ratio * shift * std::exp(setting.own * z(random)));
    }
  }
  return blocks;
}

// 1000 resamples per interval, not binder-ab's 10000: the tests run under ASan too, and the
// coverage of 1000 experiments is what they measure, not the last digit of each interval.
BootstrapOptions options_for(int experiment_index) {
  BootstrapOptions options;
  options.resamples = 1000;
  options.seed = static_cast<std::uint64_t>(experiment_index + 1);
  return options;
}

struct Rates {
  double one_level = 0, two_level = 0;  // share of intervals that contain setting.ratio
};

Rates coverage(const Setting& setting, int experiments, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  int one = 0, two = 0;
  for (int e = 0; e < experiments; ++e) {
    auto blocks = experiment(random, setting);
    if (bootstrap_blocks(blocks, options_for(e)).interval.contains(setting.ratio)) ++two;
    std::vector<double> a, b;
    for (const Block& block : blocks) {
      a.insert(a.end(), block.a.begin(), block.a.end());
      b.insert(b.end(), block.b.begin(), block.b.end());
    }
    if (bootstrap_ratio_of_medians(a, b, options_for(e)).contains(setting.ratio)) ++one;
  }
  return {static_cast<double>(one) / experiments, static_cast<double>(two) / experiments};
}

TEST(AbBlocks, TwoLevelIntervalCoversTheTrueRatioWhereThePairwiseOneDoesNot) {
  Setting setting;  // 5 blocks of 10 pairs, blocks' B/A spread 5 %
  auto rates = coverage(setting, 1000, 21);
  std::printf(
      "1000 experiments, %d blocks of %d pairs, block B/A sigma %.2f: true ratio covered "
      "by the pairwise interval %.1f %%, by the two-level interval %.1f %%\n",
      setting.blocks, setting.pairs, setting.block_ratio, rates.one_level * 100,
      rates.two_level * 100);
  EXPECT_LT(rates.one_level, 0.85);
  EXPECT_GE(rates.two_level, 0.93);
}

double false_verdict_rate(const Setting& setting, int experiments, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  int verdicts = 0;
  for (int e = 0; e < experiments; ++e) {
    auto blocks = bootstrap_blocks(experiment(random, setting), options_for(e));
    if (judge_blocks(blocks, Better::higher).detected) ++verdicts;
  }
  return static_cast<double>(verdicts) / experiments;
}

TEST(AbBlocks, IdenticalVariantsWithBlockEffectsGetAtMostSixPercentVerdicts) {
  Setting setting;
  setting.ratio = 1.0;
  double rate = false_verdict_rate(setting, 1000, 22);
  std::printf("A/A with block effects, 1000 experiments of %d blocks: %.1f %% false verdicts\n",
              setting.blocks, rate * 100);
  EXPECT_LE(rate, 0.06);
}

// kMinBlocksForVerdict's reason: what the interval would claim without the minimum. At 2 blocks
// the intervals miss the true ratio far more often than 7 %; from the minimum on they do not.
TEST(AbBlocks, MinimumBlocksIsWhereTheIntervalCoversAtLeastNinetyThreePercent) {
  Setting setting;
  setting.pairs = 8;
  std::printf("two-level coverage over 400 experiments of 8 pairs per block:\n");
  for (int blocks = 2; blocks <= 4; ++blocks) {
    setting.blocks = blocks;
    double covered = coverage(setting, 400, 30 + blocks).two_level;
    std::printf("  %d blocks: %.1f %%\n", blocks, covered * 100);
    if (blocks < static_cast<int>(kMinBlocksForVerdict))
      EXPECT_LT(covered, 0.92) << blocks << " blocks";
    else
      EXPECT_GE(covered, 0.93) << blocks << " blocks";
  }
}

TEST(AbBlocks, FewerBlocksThanTheMinimumGetNoVerdict) {
  Setting setting;
  setting.blocks = static_cast<int>(kMinBlocksForVerdict) - 1;
  setting.pairs = 20;
  setting.ratio = 0.5;  // a shift no interval could miss
  std::mt19937_64 random(5);
  auto blocks = bootstrap_blocks(experiment(random, setting));
  EXPECT_LT(blocks.interval.high, 1.0);
  auto verdict = judge_blocks(blocks, Better::higher);
  EXPECT_FALSE(verdict.detected);
  EXPECT_EQ(verdict.brief, "too few blocks");
  EXPECT_EQ(verdict.text, "too few blocks for a verdict (2, at least 3)");
}

TEST(AbBlocks, TooFewPairsInAllStillGetNoVerdict) {
  std::vector<Block> blocks{{{1, 1}, {2, 2}}, {{1, 1}, {2, 2}}, {{1, 1}, {2, 2}}};
  auto verdict = judge_blocks(bootstrap_blocks(blocks), Better::higher);
  EXPECT_FALSE(verdict.detected);
  EXPECT_EQ(verdict.brief, "too few pairs");
}

TEST(AbBlocks, HeterogeneityIsNearZeroWhenBlocksAgreeAndNearOneWhenTheyDoNot) {
  Setting agreeing;
  agreeing.block_ratio = 0;
  agreeing.blocks = 8;
  agreeing.pairs = 20;
  Setting disagreeing = agreeing;
  disagreeing.block_ratio = 0.10;
  std::mt19937_64 random(8);
  auto calm = bootstrap_blocks(experiment(random, agreeing));
  auto split = bootstrap_blocks(experiment(random, disagreeing));
  std::printf("I²: blocks agreeing %.2f, blocks' B/A sigma 0.10 %.2f\n", calm.heterogeneity,
              split.heterogeneity);
  EXPECT_LT(calm.heterogeneity, 0.5);
  EXPECT_GT(split.heterogeneity, 0.8);
  EXPECT_EQ(split.block_ratios.size(), 8u);
  EXPECT_EQ(split.interval.pairs, 160u);
  EXPECT_GT(split.interval.high - split.interval.low, calm.interval.high - calm.interval.low);
}

TEST(AbBlocks, RefusesBlocksWithoutARatio) {
  std::vector<Block> none, empty{{}}, uneven{{{1, 2}, {1}}}, zero{{{0, 0}, {1, 1}}};
  EXPECT_THROW(bootstrap_blocks(none), std::invalid_argument);
  EXPECT_THROW(bootstrap_blocks(empty), std::invalid_argument);
  EXPECT_THROW(bootstrap_blocks(uneven), std::invalid_argument);
  EXPECT_THROW(bootstrap_blocks(zero), std::invalid_argument);
}

}  // namespace
}  // namespace cused::tools::ab
