// SPDX-License-Identifier: GPL-2.0-only
// binder-ab run FILE...: each experiment file's comparisons (one per cell of its sweep), each on
// fresh state per block that binder-ab makes and tears down itself (experiment_block.h); the
// table, the published figures beside cused's (when the file has them), an SVG and a JSON record
// per comparison, and a run record per file that embeds the file as run and the build, so that
// `binder-ab --replay RECORD` reprints it and `binder-ab run RECORD` runs it again.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cused::tools::ab {

struct RunOptions {
  std::vector<std::string> files;
  std::vector<std::string> settings;  // KEY=VALUE, applied to each file in order (--set)
  std::string add_a, add_b;           // variant keys on top of every cell's A or B (--add-a/-b)
  bool quick = false;                 // time 2, 3 blocks, then the file's "quick" keys
  bool aa = false;                    // B gets A's variant: an A/A experiment (calibration)
  bool trace = false;                 // as the file's "trace": true
  std::string out = "build/ab-run";
  std::string table = "both";  // which tables go to stdout: ab, published, both, none
  std::string progress = "auto";
  double progress_seconds = 10;
  std::optional<std::uint64_t> seed;
  std::string cused;                   // default: beside binder-ab's build, else on PATH
  std::string binder_throughput_test;  // Google's (default: on PATH, else .deps/aosp/build/)
};

// Runs every file; returns the exit status. Throws ExperimentError for a refused file (before
// anything runs) and std::runtime_error for a comparison that failed.
int run_experiment_files(const RunOptions& options);

// Whether `record` is a run record (binder-ab run's NAME.run.json).
bool is_run_record(const nlohmann::json& record);

// A run record's tables again (binder-ab --replay RECORD), its comparisons re-analysed with their
// own seeds.
void print_run_record(const nlohmann::json& record, bool header);

}  // namespace cused::tools::ab
