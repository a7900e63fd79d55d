// binder-ab's outputs: the Markdown table (one row per experiment, like the tables in kernel
// mailing-list patch series), the JSON record with every run, and an SVG plot of each variant's
// distribution (box: quartiles and median; dots: runs).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/ab/statistics.h"
#include "tools/ab/workload.h"

namespace cused::tools::ab {

struct Analysis {
  std::string name;  // the row's label ("payload 4096")
  std::string metric_name;
  Better better = Better::higher;
  Variant a, b;
  std::vector<double> runs_a, runs_b;
  Summary summary_a, summary_b;
  RatioInterval interval;
  Verdict verdict;
  std::string note;  // detection_note for the target difference
  double target_percent = 5;
  int warmup_pairs = 0;
  double seconds = 0;
  std::vector<std::string> command;
  std::uint64_t seed = 0;
  int resamples = 0;
};

// The statistics of `runs_a`/`runs_b` filled in from the runs.
Analysis analyze(Analysis analysis, const BootstrapOptions& bootstrap);

// Which variant is which, what the metric is, then the table's header lines.
std::string markdown_header(const Analysis& analysis);
std::string markdown_row(const Analysis& analysis);

nlohmann::json to_json(const Analysis& analysis);
// The inverse of to_json for the runs and settings (the statistics are recomputed by analyze).
Analysis from_json(const nlohmann::json& record);

std::string svg_plot(const Analysis& analysis);

}  // namespace cused::tools::ab
