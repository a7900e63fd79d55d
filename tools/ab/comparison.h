// SPDX-License-Identifier: GPL-2.0-only
// One binder-ab comparison: A against B with one workload, measured (in blocks or in one run of
// pairs) and analysed; and the table printed from analyses. binder-ab's command line and
// `binder-ab run FILE` (experiment_runner.h) both fill in ComparisonSettings and call these.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/ab/block_experiment.h"
#include "tools/ab/experiment.h"
#include "tools/ab/latency.h"
#include "tools/ab/report.h"
#include "tools/ab/statistics.h"
#include "tools/ab/workload.h"

namespace cused::tools::ab {

struct ComparisonSettings {
  std::string a, b;
  std::vector<std::string> command;
  std::string mount_dir = "/dev/binderfs";
  std::string name;
  std::string metric = kDefaultMetric;
  std::string metric_name;
  bool lower_is_better = false;
  bool count_metric = false;
  bool latency = false;
  // Which percentiles --latency reads (binder-ab run's "latency"); empty: all four.
  std::vector<LatencyPercentile> percentiles{};
  Schedule schedule;
  double budget_seconds = 60;
  double run_limit_seconds = 120;
  BootstrapOptions bootstrap;
  bool seed_given = false;
  double target_percent = 5;
  std::string json_path, svg_path;
  std::vector<std::string> replay;
  double scale_b = 1;
  bool no_header = false;
  bool verbose = false;
  std::string progress = "auto";
  double progress_seconds = 10;
  bool dev_binder = false;
  std::string dev_binder_helper;  // default: with-dev-binder beside this program
  BlockPlan blocks;               // blocks == 0: one run of pairs, as before --blocks
  double ready_seconds = 60;
  bool aa = false;
  std::string trace_dir;  // --trace: a traced run of each variant, kept here
};

// Writes `text` to `path`; throws std::runtime_error if it cannot.
void write_file(const std::string& path, const std::string& text);

// A program that binder-ab's build and installation put beside it (with-dev-binder,
// servicemanager, ...).
std::string sibling_program(const std::string& name);

// The comparison `settings` describes, measured and analysed (with `settings.blocks.make_state`
// or `.setup`, block by block).
Analysis measure_and_analyze(const ComparisonSettings& settings);

// A record saved with --json, re-analysed; its own seed unless settings.seed_given.
Analysis replay_record(const nlohmann::json& record, const ComparisonSettings& settings);

// The Markdown table of `analyses`, their verdict lines, secondary metrics and traced windows.
void print_table(const std::vector<Analysis>& analyses, bool header);

}  // namespace cused::tools::ab
