// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's outputs: the Markdown table (one row per experiment, like the tables in kernel
// mailing-list patch series), the JSON record with every run, and an SVG plot of each variant's
// distribution (box: quartiles and median; dots: runs).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/ab/block_bootstrap.h"
#include "tools/ab/statistics.h"
#include "tools/ab/traced_run.h"
#include "tools/ab/workload.h"

namespace cused::tools::ab {

// A further number read from the same runs (--latency: binder-throughput's 50 % and 99 %
// latencies), with its own statistics; the plot draws it beside the main metric.
struct SecondaryMetric {
  std::string name;
  Better better = Better::lower;
  std::vector<double> runs_a, runs_b;  // run i of each, as the main metric's
  std::string unit;                    // what its values count ("ms")
  double resolution = 0;  // the width of the buckets its runs are midpoints of; 0: precise
  Summary summary_a, summary_b;
  RatioInterval interval;  // over the blocks when the experiment has them
  Verdict verdict;
  std::vector<double> block_ratios;
};

struct Analysis {
  std::string name;  // the row's label ("payload 4096")
  std::string metric_name;
  Better better = Better::higher;
  Wording wording = Wording::speed;
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
  std::vector<SecondaryMetric> secondary;
  // binder-ab --blocks: where each block's pairs lie in runs_a/runs_b (and in each secondary
  // metric's runs); empty for an experiment run as one block. With blocks, `interval` and
  // `verdict` come from the two-level bootstrap over them (block_bootstrap.h), and its B/A is
  // the median of the blocks' own.
  std::vector<BlockSpan> blocks;
  std::vector<double> block_ratios;  // each block's median(B)/median(A)
  double heterogeneity = 0;          // I² of the blocks' B/A
  bool aa = false;                   // --aa: B is A's variant on a device of its own
  // --trace: the traced run of each variant with its lock summary (not among the runs above).
  std::vector<TracedRun> traces;
};

// The statistics of `runs_a`/`runs_b` (and of each secondary metric's) filled in from the runs.
Analysis analyze(Analysis analysis, const BootstrapOptions& bootstrap);

// The line after the table for one secondary metric: "NAME, METRIC: B/A r [low, high]; verdict";
// for a bucket-quantized one the bucket width beside the metric, and when the buckets cannot
// resolve, the medians instead of a ratio that would only be one of midpoints.
std::string secondary_line(const Analysis& analysis, const SecondaryMetric& metric);

// Which variant is which, what the metric is, then the table's header lines.
// With `block_columns`, two more columns: the blocks' own B/A and their I² ("—" for a row
// without blocks).
std::string markdown_header(const Analysis& analysis, bool block_columns = false);
std::string markdown_row(const Analysis& analysis, bool block_columns = false);

nlohmann::json to_json(const Analysis& analysis);
// The inverse of to_json for the runs and settings (the statistics are recomputed by analyze).
Analysis from_json(const nlohmann::json& record);

// One panel per metric, side by side (the main one first), each with a box and dots per variant;
// after them the blocks' B/A (--blocks) and the traced window's lock waits (--trace);
// the title has the row's name, the main metric's B/A, its interval and the verdict. Labels and
// titles are wrapped, and the picture widened, so that no text is cut off.
std::string svg_plot(const Analysis& analysis);

// The width in pixels that `text` takes at `font_size` in the plot's sans-serif font, estimated
// from its character count on the wide side (0.6 em a character): what the layout reserves.
double text_width(const std::string& text, double font_size);

}  // namespace cused::tools::ab
