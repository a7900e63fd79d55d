// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --blocks K: the experiment as K independent blocks, each on fresh system state (a
// --block-setup command started anew: daemon, devices, servicemanagers, background load), the
// order of A and B in its pairs drawn per block, its share of the time budget its own. The
// blocks' pairs feed the two-level bootstrap (block_bootstrap.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/ab/block_bootstrap.h"
#include "tools/ab/block_state.h"
#include "tools/ab/experiment.h"
#include "tools/ab/workload.h"

namespace cused::tools::ab {

// The fewest pairs a block is given, whatever its share of the budget: a block's own B/A is a
// ratio of medians, and fewer than 3 pairs make it one of single runs.
inline constexpr int kMinPairsPerBlock = 3;

struct BlockPlan {
  int blocks = 0;
  std::string setup{};  // --block-setup; empty: the blocks share whatever serves the devices
  // How long a block's setup may take before A's and B's devices answer.
  std::chrono::duration<double> ready_limit{60};
  // --block-signals-ready: a block is ready only once its setup has created $CUSED_AB_READY
  // (what binder-ab cannot see for itself: servicemanagers registered, background load running).
  bool setup_signals_ready = false;
  std::uint64_t order_seed = 0;  // which blocks run B first
  // binder-ab run FILE: the block's state made by binder-ab itself (used instead of `setup`);
  // ready once it returns.
  std::function<std::unique_ptr<BlockState>(int block)> make_state{};
};

// A and B of one block, read once its setup runs (labels checked against the devices' variants);
// throws while the devices are not there yet.
using PrepareVariants = std::function<std::pair<Variant, Variant>()>;

// Measures one block's pairs with `schedule` (its budget, order and warm-up); `block` is 1-based.
using MeasureBlock = std::function<Measurements(const Variant& a, const Variant& b,
                                                const Schedule& schedule, int block)>;

struct BlockMeasurements {
  Measurements all;  // every block's pairs, one block after another
  std::vector<BlockSpan> spans;
  Variant a, b;  // as the first block found them
};

// Runs the blocks one after another. Each makes its state (`plan.make_state`) or starts
// `plan.setup` (if any), waits until it signals
// (with `plan.setup_signals_ready`) and `prepare` succeeds, measures, and stops the setup.
// `schedule.budget` is the whole experiment's: a block gets what is left over the blocks still to
// run. With `schedule.pairs` set, every block gets that many pairs. Throws std::runtime_error when
// a setup ends or does not get ready, or when a block's devices have other variants than the first
// block's.
BlockMeasurements measure_blocks(const BlockPlan& plan, const PrepareVariants& prepare,
                                 const MeasureBlock& measure_block, const Schedule& schedule);

}  // namespace cused::tools::ab
