// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/comparison.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "tools/ab/progress.h"
#include "tools/ab/trace_report.h"
#include "tools/ab/traced_run.h"
#include "tools/ab/variant_check.h"

namespace cused::tools::ab {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

std::string sibling_program(const std::string& name) {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / name).string();
}

namespace {

std::string default_metric_name(const ComparisonSettings& settings) {
  if (!settings.metric_name.empty()) return settings.metric_name;
  return settings.metric == kDefaultMetric ? "iterations per sec" : settings.metric;
}

// The row's name when none is given: the program's name and its arguments, "{dev}" kept as the
// placeholder it is (the device differs between A and B).
std::string default_name(const std::vector<std::string>& command) {
  std::string name = command.front().substr(command.front().rfind('/') + 1);
  for (std::size_t i = 1; i < command.size(); ++i) name += ' ' + command[i];
  return name;
}

// --progress: "auto" is live on a terminal, plain lines in a log. With -v the pair lines go to
// stderr too, and a line redrawn in place would overwrite them: plain then.
ProgressMode progress_mode(const ComparisonSettings& settings) {
  bool terminal = isatty(STDERR_FILENO) == 1 && !settings.verbose;
  return *parse_progress_mode(settings.progress, terminal);
}

// The workload as it is run: with --dev-binder, under with-dev-binder, so that /dev/binder is the
// variant's device for a program that opens nothing else (the table still names the program).
std::vector<std::string> command_to_run(const ComparisonSettings& settings) {
  if (!settings.dev_binder) return settings.command;
  std::vector<std::string> command{settings.dev_binder_helper.empty()
                                       ? sibling_program("with-dev-binder")
                                       : settings.dev_binder_helper,
                                   "{dev}"};
  command.insert(command.end(), settings.command.begin(), settings.command.end());
  return command;
}

// --latency's secondary metrics, in the order measure() reads them and the panels show them.
// binderThroughputTest's bucket line has no P99.9: that panel is shown for programs that print
// the precise line (cused's binder-throughput) and left out for those that print none.
struct LatencyPanel {
  LatencyPercentile percentile;
  const char* name;
  bool every_program;  // false: a program may not print it at all
};
constexpr LatencyPanel kLatencyPanels[] = {{LatencyPercentile::p50, "P50 latency (ms)", true},
                                           {LatencyPercentile::p90, "P90 latency (ms)", true},
                                           {LatencyPercentile::p99, "P99 latency (ms)", true},
                                           {LatencyPercentile::p999, "P99.9 latency (ms)", false}};

// The panels the settings ask for, in kLatencyPanels' order.
std::vector<LatencyPanel> latency_panels(const ComparisonSettings& settings) {
  std::vector<LatencyPanel> panels;
  for (const auto& panel : kLatencyPanels)
    if (settings.percentiles.empty() ||
        std::find(settings.percentiles.begin(), settings.percentiles.end(), panel.percentile) !=
            settings.percentiles.end())
      panels.push_back(panel);
  return panels;
}

// A reading a program does not offer at all, told apart from a missing one (an error).
constexpr double kNotOffered = std::numeric_limits<double>::quiet_NaN();

// A panel's runs: offered by all (kept), by none (left out), or by some only (an error: the
// same program printed it in one run and not in another).
bool offered_by_all(const LatencyPanel& panel, const std::vector<double>& runs_a,
                    const std::vector<double>& runs_b) {
  auto offered = [](double value) { return !std::isnan(value); };
  auto count = std::count_if(runs_a.begin(), runs_a.end(), offered) +
               std::count_if(runs_b.begin(), runs_b.end(), offered);
  if (count == 0) return false;
  if (static_cast<std::size_t>(count) != runs_a.size() + runs_b.size())
    throw std::runtime_error(fmt::format("{}: printed in {} of {} runs only", panel.name, count,
                                         runs_a.size() + runs_b.size()));
  return true;
}

// A block's devices come with its setup: until they are there, the block is not ready (a label
// without a spec checks nothing that would say so).
void require_device(const char* side, const Variant& variant) {
  if (!std::filesystem::exists(variant.device))
    throw std::runtime_error(fmt::format("{}'s device {} is not there", side, variant.device));
}

// A and B as their devices are now, labels checked; with --aa, both must have one variant.
std::pair<Variant, Variant> prepare_variants(const ComparisonSettings& settings) {
  auto a = resolve_variant(settings.a, settings.mount_dir);
  auto b = resolve_variant(settings.b, settings.mount_dir);
  if (settings.blocks.blocks > 0) {
    require_device("A", a);
    require_device("B", b);
  }
  check_label("A", a);
  check_label("B", b);
  if (!settings.trace_dir.empty()) {
    check_traceable("A", a);
    check_traceable("B", b);
  }
  if (settings.aa && a.actual != b.actual)
    throw std::runtime_error(fmt::format(
        "--aa: B ({}) must have A's variant on a device of its own, but A ({}) has {} and B {}",
        b.device, a.device, a.actual.empty() ? "none that cused reports" : a.actual,
        b.actual.empty() ? "none that cused reports" : b.actual));
  return {a, b};
}

// The block whose daemon --trace traces: the middle one, so that the window sees the machine as
// the experiment mostly did (1 without --blocks).
int traced_block(const ComparisonSettings& settings) {
  return (std::max(settings.blocks.blocks, 1) + 1) / 2;
}

// --trace's window in `block`, after its measured pairs, while its setup still runs.
void trace_if_chosen(const ComparisonSettings& settings, Analysis& analysis, const Variant& a,
                     const Variant& b, const Schedule& schedule, int block) {
  if (settings.trace_dir.empty() || block != traced_block(settings)) return;
  fmt::print(stderr, "binder-ab: tracing one run of each variant into {}\n", settings.trace_dir);
  analysis.traces = traced_pair({.dir = settings.trace_dir,
                                 .command = analysis.command,
                                 .metric = std::regex(settings.metric),
                                 .run_limit = schedule.run_limit},
                                a, b, schedule.b_first, block);
}

// The pairs of one block (or of the whole experiment without --blocks), with the progress line;
// then --trace's window if this is its block.
Measurements measure_pairs(const ComparisonSettings& settings, Analysis& analysis, const Variant& a,
                           const Variant& b, const Schedule& schedule, int block) {
  std::string name = analysis.name;
  if (settings.blocks.blocks > 0)
    name += fmt::format(", block {}/{}", block, settings.blocks.blocks);
  Progress progress(stderr, progress_mode(settings),
                    {.name = name,
                     .warmup_total = schedule.warmup_pairs,
                     .planned_pairs = schedule.pairs,
                     .budget = schedule.budget,
                     .confidence = settings.bootstrap.confidence},
                    std::chrono::duration<double>(settings.progress_seconds));
  MeasureObserver observer{
      .warmed_up = [&progress](int done) { progress.warmup_done(done); },
      .measured =
          [&progress](const Measurements& so_far) { progress.pairs_measured(so_far.a, so_far.b); }};
  MetricPatterns metrics{std::regex(settings.metric), {}};
  if (settings.latency)
    for (const auto& panel : latency_panels(settings))
      metrics.secondary.push_back(
          [panel, command = analysis.command](const std::string& out) -> std::optional<Reading> {
            auto reading = read_latency(out, panel.percentile, command);
            if (!reading && !panel.every_program) return Reading{kNotOffered, 0};
            return reading;
          });
  auto measurements = measure(a, b, analysis.command, metrics, schedule,
                              settings.verbose ? stderr : nullptr, observer);
  progress.finish();
  trace_if_chosen(settings, analysis, a, b, schedule, block);
  return measurements;
}

}  // namespace

Analysis measure_and_analyze(const ComparisonSettings& settings) {
  Analysis analysis;
  analysis.command = command_to_run(settings);
  analysis.name = settings.name.empty() ? default_name(settings.command) : settings.name;
  analysis.metric_name = default_metric_name(settings);
  analysis.better = settings.lower_is_better ? Better::lower : Better::higher;
  analysis.wording = settings.count_metric ? Wording::amount : Wording::speed;
  analysis.target_percent = settings.target_percent;
  analysis.aa = settings.aa;
  Measurements measurements;
  if (settings.blocks.blocks > 0) {
    auto result = measure_blocks(
        settings.blocks, [&settings] { return prepare_variants(settings); },
        [&](const Variant& a, const Variant& b, const Schedule& schedule, int block) {
          return measure_pairs(settings, analysis, a, b, schedule, block);
        },
        settings.schedule);
    analysis.a = std::move(result.a);
    analysis.b = std::move(result.b);
    analysis.blocks = std::move(result.spans);
    measurements = std::move(result.all);
  } else {
    std::tie(analysis.a, analysis.b) = prepare_variants(settings);
    measurements = measure_pairs(settings, analysis, analysis.a, analysis.b, settings.schedule, 1);
  }
  auto panels = latency_panels(settings);
  for (std::size_t i = 0; i < measurements.secondary_a.size(); ++i) {
    if (!offered_by_all(panels[i], measurements.secondary_a[i], measurements.secondary_b[i]))
      continue;
    SecondaryMetric metric;
    metric.name = panels[i].name;
    metric.better = Better::lower;
    metric.runs_a = std::move(measurements.secondary_a[i]);
    metric.runs_b = std::move(measurements.secondary_b[i]);
    metric.unit = "ms";
    metric.resolution = measurements.secondary_resolution[i];
    analysis.secondary.push_back(std::move(metric));
  }
  analysis.runs_a = std::move(measurements.a);
  analysis.runs_b = std::move(measurements.b);
  analysis.warmup_pairs = measurements.warmup_pairs;
  analysis.seconds = measurements.elapsed.count();
  return analyze(std::move(analysis), settings.bootstrap);
}

// A saved run, re-analyzed; its own seed unless --seed is given, so the table comes out the same.
Analysis replay_record(const nlohmann::json& record, const ComparisonSettings& settings) {
  Analysis analysis = from_json(record);
  BootstrapOptions bootstrap = settings.bootstrap;
  if (!settings.seed_given) bootstrap.seed = record.at("ratio").at("seed").get<std::uint64_t>();
  if (settings.scale_b != 1) {
    for (double& value : analysis.runs_b) value *= settings.scale_b;
    analysis.name += fmt::format(" (B x {:g})", settings.scale_b);
  }
  return analyze(std::move(analysis), bootstrap);
}

void print_table(const std::vector<Analysis>& analyses, bool header) {
  bool block_columns = std::any_of(analyses.begin(), analyses.end(), [](const Analysis& analysis) {
    return !analysis.blocks.empty();
  });
  if (header) fmt::print("{}", markdown_header(analyses.front(), block_columns));
  for (const auto& analysis : analyses) fmt::print("{}", markdown_row(analysis, block_columns));
  fmt::print("\n");
  for (const auto& analysis : analyses)
    fmt::print("{}: {}; {} (warm-up pairs: {}, {:.0f} s)\n", analysis.name, analysis.verdict.text,
               analysis.note, analysis.warmup_pairs, analysis.seconds);
  for (const auto& analysis : analyses)
    for (const auto& metric : analysis.secondary)
      fmt::print("{}", secondary_line(analysis, metric));
  for (const auto& analysis : analyses)
    if (!analysis.traces.empty()) fmt::print("{}", trace_tables(analysis.traces));
}

}  // namespace cused::tools::ab
