// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/block_experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "tools/ab/block_setup.h"
#include "tools/ab/stop_signals.h"

namespace cused::tools::ab {

namespace {

using Clock = std::chrono::steady_clock;

// Where each block's setup says it is ready (CUSED_AB_READY): a directory of this run's own,
// removed with what is in it when the blocks end.
class ReadyFiles {
 public:
  ReadyFiles() {
    std::string pattern = (std::filesystem::temp_directory_path() / "binder-ab-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::system_error(errno, std::generic_category(), "binder-ab: mkdtemp");
    dir_ = pattern;
    on_stop_signal_.emplace([dir = dir_] {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    });
  }
  ~ReadyFiles() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ReadyFiles(const ReadyFiles&) = delete;
  ReadyFiles& operator=(const ReadyFiles&) = delete;
  std::string of_block(int block) const { return (dir_ / fmt::format("block-{}", block)).string(); }

 private:
  std::filesystem::path dir_;
  std::optional<StopCleanup> on_stop_signal_;
};

// A and B once `setup` has made them answer (and, if `ready_file` is set, created it): `prepare`
// is retried until it succeeds, the setup ends, or the limit passes (then the last complaint is
// the error).
std::pair<Variant, Variant> wait_until_ready(const PrepareVariants& prepare, BlockState* setup,
                                             std::chrono::duration<double> limit, int block,
                                             const std::string& ready_file) {
  auto deadline = Clock::now() + limit;
  for (;;) {
    try {
      if (!ready_file.empty() && !std::filesystem::exists(ready_file))
        throw std::runtime_error(
            fmt::format("the setup has not created {} ($CUSED_AB_READY)", ready_file));
      return prepare();
    } catch (const std::exception& error) {
      if (setup == nullptr) throw;
      if (!setup->running())
        throw std::runtime_error(fmt::format("block {}: {} before the devices were ready: {}",
                                             block, setup->describe_end(), error.what()));
      if (Clock::now() >= deadline)
        throw std::runtime_error(fmt::format(
            "block {}: the devices were not ready {:.0f} s after the block's setup started: {}",
            block, limit.count(), error.what()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Every block must measure the variants the first one did: a setup that starts another variant
// in one block would mix two experiments into one row.
void check_same_variants(const BlockMeasurements& so_far, const Variant& a, const Variant& b,
                         int block) {
  for (auto [side, first, now] : {std::tuple{"A", &so_far.a, &a}, {"B", &so_far.b, &b}})
    if (first->actual != now->actual)
      throw std::runtime_error(fmt::format("block {}: {} ({}) has {}, but block 1's had {}", block,
                                           side, now->device, now->actual, first->actual));
}

void append(Measurements& all, const Measurements& block) {
  all.a.insert(all.a.end(), block.a.begin(), block.a.end());
  all.b.insert(all.b.end(), block.b.begin(), block.b.end());
  all.secondary_a.resize(block.secondary_a.size());
  all.secondary_b.resize(block.secondary_b.size());
  all.secondary_resolution.resize(block.secondary_resolution.size());
  for (std::size_t i = 0; i < block.secondary_a.size(); ++i) {
    all.secondary_a[i].insert(all.secondary_a[i].end(), block.secondary_a[i].begin(),
                              block.secondary_a[i].end());
    all.secondary_b[i].insert(all.secondary_b[i].end(), block.secondary_b[i].begin(),
                              block.secondary_b[i].end());
    all.secondary_resolution[i] =
        std::max(all.secondary_resolution[i], block.secondary_resolution[i]);
  }
  all.warmup_pairs += block.warmup_pairs;
}

}  // namespace

BlockMeasurements measure_blocks(const BlockPlan& plan, const PrepareVariants& prepare,
                                 const MeasureBlock& measure_block, const Schedule& schedule) {
  if (plan.blocks < 1) throw std::invalid_argument("measure_blocks needs at least one block");
  BlockMeasurements result;
  std::mt19937_64 order(plan.order_seed);
  std::bernoulli_distribution b_first(0.5);
  // Only a setup that signals gets a file to create.
  std::optional<ReadyFiles> ready_files;
  if (!plan.setup.empty() && plan.setup_signals_ready) ready_files.emplace();
  auto start = Clock::now();
  for (int block = 1; block <= plan.blocks; ++block) {
    auto block_start = Clock::now();
    // This block's share of what is left of the budget (its setup included).
    auto share = (schedule.budget - (block_start - start)) / (plan.blocks - block + 1);
    std::unique_ptr<BlockState> setup;
    std::string ready_file = ready_files ? ready_files->of_block(block) : "";
    if (plan.make_state)
      setup = plan.make_state(block);
    else if (!plan.setup.empty())
      setup = std::make_unique<BlockSetup>(plan.setup, block, ready_file);
    auto [a, b] = wait_until_ready(prepare, setup.get(), plan.ready_limit, block, ready_file);
    if (block == 1) {
      result.a = a;
      result.b = b;
    }
    check_same_variants(result, a, b, block);

    Schedule block_schedule = schedule;
    block_schedule.b_first = b_first(order);
    block_schedule.min_pairs = schedule.pairs > 0 ? schedule.pairs : kMinPairsPerBlock;
    // Past the budget (setups that took longer than planned) a block still gets its minimum
    // pairs, with no time of its own.
    block_schedule.budget =
        std::max<decltype(share)>(share - (Clock::now() - block_start), decltype(share){0});
    auto measured = measure_block(a, b, block_schedule, block);
    if (setup) setup->stop();

    result.spans.push_back(
        {.first = result.all.a.size(),
         .pairs = measured.a.size(),
         .b_first = block_schedule.b_first,
         .warmup_pairs = measured.warmup_pairs,
         .seconds = std::chrono::duration<double>(Clock::now() - block_start).count()});
    append(result.all, measured);
  }
  result.all.elapsed = Clock::now() - start;
  return result;
}

}  // namespace cused::tools::ab
