// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's schedule: warm-up runs (discarded), then A B A B ... until the run count or the
// time budget is reached. Interleaving puts both variants under the same machine state, run by
// run; the pairs feed the paired bootstrap (statistics.h).
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "tools/ab/statistics.h"
#include "tools/ab/workload.h"

namespace cused::tools::ab {

struct Schedule {
  int pairs = 0;                             // measured A B pairs; 0 = as many as fit the budget
  std::chrono::duration<double> budget{60};  // whole experiment, warm-up included
  int warmup_pairs = 1;
  // A budget too small for this many still runs them: fewer get no verdict (--runs takes no less).
  int min_pairs = static_cast<int>(kMinPairsForVerdict);
  std::chrono::duration<double> run_limit{120};  // one run; beyond it the workload is killed
  // Each pair runs B, then A (binder-ab --blocks draws it per block): a drift inside a pair
  // then favours neither variant across blocks.
  bool b_first = false;
};

struct Measurements {
  std::vector<double> a, b;  // a[i] and b[i] ran next to each other
  // Per secondary metric, its value in run i of A and of B (the runs of `a` and `b`).
  std::vector<std::vector<double>> secondary_a, secondary_b;
  // Per secondary metric, the coarsest resolution of its runs (Reading::resolution; 0: exact).
  std::vector<double> secondary_resolution;
  int warmup_pairs = 0;
  std::chrono::duration<double> elapsed{};
};

// Told on the measuring thread after each warm-up pair and each measured pair (binder-ab's
// progress line, tools/ab/progress.h).
struct MeasureObserver {
  std::function<void(int warmup_pairs_done)> warmed_up;
  std::function<void(const Measurements& so_far)> measured;
};

// A further metric's reader: its value in one run's output, nullopt if the output lacks it.
using SecondaryReader = std::function<std::optional<Reading>(const std::string& output)>;

// What to read from a run's output: the metric the experiment is about, and further ones read
// from the same runs (--latency) for the plot and the JSON.
struct MetricPatterns {
  std::regex main;
  std::vector<SecondaryReader> secondary;
};

// Runs the experiment. `progress`, if not null, gets a line per pair (-v). Throws
// std::runtime_error when a run fails or lacks one of the metrics (with the tail of its output):
// a broken workload is an error, never a data point.
Measurements measure(const Variant& a, const Variant& b, const std::vector<std::string>& command,
                     const MetricPatterns& metrics, const Schedule& schedule, std::FILE* progress,
                     const MeasureObserver& observer = {});

}  // namespace cused::tools::ab
