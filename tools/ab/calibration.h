// SPDX-License-Identifier: GPL-2.0-only
// binder-ab calibrate FILE...: N A/A experiments of any experiment file (B gets A's variant, so
// every verdict is a false one), each comparison re-analysed as measured (the false-verdict rate)
// and with B's runs scaled by 0.95 (a known 5 % difference under the noise that was really there:
// the power), each rate with its 95 % Wilson score interval (docs/ab.md, "Calibration").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tools/ab/experiment_runner.h"

namespace cused::tools::ab {

// The 95 % Wilson score interval of `successes` in `trials` (trials > 0), as shares in [0, 1].
std::pair<double, double> wilson_interval(int successes, int trials);

// One comparison's calibration: its A/A runs re-analysed.
struct CalibrationRow {
  std::string name;  // the comparison's (a sweep cell's) name
  double seconds = 0;
  int blocks = 0;
  int experiments = 0;
  int false_verdicts = 0;        // A/A runs that printed a difference
  int resolved_scaled = 0;       // the same runs with B x 0.95 that resolved it
  double median_half_width = 0;  // the median interval's half width, percent of B/A
};

// The row of one comparison from its A/A records (binder-ab --json records, one per experiment).
CalibrationRow calibration_row(const std::string& name,
                               const std::vector<nlohmann::json>& aa_records);

// The Markdown table of `rows`.
std::string calibration_table(const std::vector<CalibrationRow>& rows);

// Runs `experiments` A/A experiments of every file in `options` (their records under
// options.out/aa-K/), prints the table and writes options.out/calibration.json; returns the
// exit status.
int run_calibration(RunOptions options, int experiments);

}  // namespace cused::tools::ab
