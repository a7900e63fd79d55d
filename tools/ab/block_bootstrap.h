// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's B/A over independent blocks (issue 29): an experiment run as K blocks, each on a
// fresh daemon, with interleaved A/B pairs inside each. Runs of one block share what a daemon
// start fixes (placement, memcg state, the hogs' phase), so pairs of one block are not independent
// of each other and the pairwise interval over all of them is too narrow when blocks disagree.
// The two-level bootstrap resamples blocks, then pairs within each resampled block, so that the
// interval widens with the blocks' disagreement.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tools/ab/statistics.h"

namespace cused::tools::ab {

// One block's pairs: a[i] and b[i] ran next to each other on the same daemon start.
struct Block {
  std::vector<double> a, b;
};

// Where a block's pairs lie in an experiment's runs: pairs [first, first + pairs) of runs_a and
// runs_b (binder-ab keeps every run in one list per variant, the blocks one after another).
struct BlockSpan {
  std::size_t first = 0, pairs = 0;
  bool b_first = false;  // each pair ran B, then A
  int warmup_pairs = 0;
  double seconds = 0;  // setup, warm-up and pairs
};

// The blocks of `spans` cut out of the runs. Throws std::invalid_argument for a span beyond them.
std::vector<Block> split_blocks(std::span<const double> a, std::span<const double> b,
                                std::span<const BlockSpan> spans);

// The fewest blocks that get a verdict. Below it the interval over blocks cannot be trusted:
// in simulated experiments (tests/unit/tools/ab_block_bootstrap_test.cc prints the rates;
// docs/ab.md records them) coverage at 2 blocks falls well below 95 % whatever the interval's
// correction, and from 3 blocks on it stays at or above 93 %.
inline constexpr std::size_t kMinBlocksForVerdict = 3;

struct BlockInterval {
  RatioInterval interval;            // the two-level interval; pairs = all pairs of all blocks
  std::vector<double> block_ratios;  // each block's median(B)/median(A), in block order
  // I²: the share of the variance of the blocks' log B/A that lies between blocks rather than
  // within them (Higgins & Thompson 2002): 0 when blocks agree as well as their own pairs allow,
  // near 1 when they disagree far beyond that.
  double heterogeneity = 0;
  std::size_t blocks = 0;
};

// The two-level percentile bootstrap of B/A over `blocks` (see block_bootstrap.cc for the
// statistic and the small-K correction). Throws std::invalid_argument on no blocks, an empty
// block, a block whose A and B differ in length, or a zero median of A in a block.
BlockInterval bootstrap_blocks(std::span<const Block> blocks, const BootstrapOptions& options = {});

// judge() on the two-level interval, with one more rule: fewer than kMinBlocksForVerdict blocks
// give "too few blocks", never a verdict (and fewer than kMinPairsForVerdict pairs in all,
// judge()'s "too few pairs"). Too few blocks set Verdict::too_few_pairs too: no verdict for want
// of independent units.
Verdict judge_blocks(const BlockInterval& blocks, Better better, Wording wording = Wording::speed,
                     const std::string& metric_name = {});

}  // namespace cused::tools::ab
