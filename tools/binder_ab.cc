// SPDX-License-Identifier: GPL-2.0-only
// binder-ab: one workload against two binder devices (variants A and B) interleaved, A B A B ...,
// for a run count or a time budget; prints the medians, the B/A ratio with a bootstrap confidence
// interval and the spread as a Markdown table, and can write every run as JSON and a plot as SVG.
//
//   binder-ab [options] A B -- COMMAND ARGS...     ("{dev}" in ARGS becomes the device)
//   binder-ab --dev-binder [options] A B -- COMMAND ARGS...   (COMMAND opens /dev/binder:
//                                                  Google's binderThroughputTest)
//   binder-ab --replay RUN.json...                 (the table again from saved runs)
//
// docs/ab.md has the method and a sample table.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "client/program_errors.h"
#include "core/version.h"
#include "tools/ab/block_experiment.h"
#include "tools/ab/experiment.h"
#include "tools/ab/latency.h"
#include "tools/ab/progress.h"
#include "tools/ab/report.h"
#include "tools/ab/stop_signals.h"
#include "tools/ab/trace_report.h"
#include "tools/ab/traced_run.h"
#include "tools/ab/variant_check.h"

namespace {

using namespace cused::tools::ab;

struct Settings {
  std::string a, b;
  std::vector<std::string> command;
  std::string mount_dir = "/dev/binderfs";
  std::string name;
  std::string metric = kDefaultMetric;
  std::string metric_name;
  bool lower_is_better = false;
  bool count_metric = false;
  bool latency = false;
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

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

std::string default_metric_name(const Settings& settings) {
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
ProgressMode progress_mode(const Settings& settings) {
  bool terminal = isatty(STDERR_FILENO) == 1 && !settings.verbose;
  return *parse_progress_mode(settings.progress, terminal);
}

// tools/with-dev-binder, which binder-ab's own build and install put beside it.
std::string sibling_dev_binder_helper() {
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "with-dev-binder")
      .string();
}

// The workload as it is run: with --dev-binder, under with-dev-binder, so that /dev/binder is the
// variant's device for a program that opens nothing else (the table still names the program).
std::vector<std::string> command_to_run(const Settings& settings) {
  if (!settings.dev_binder) return settings.command;
  std::vector<std::string> command{
      settings.dev_binder_helper.empty() ? sibling_dev_binder_helper() : settings.dev_binder_helper,
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
std::pair<Variant, Variant> prepare_variants(const Settings& settings) {
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
int traced_block(const Settings& settings) { return (std::max(settings.blocks.blocks, 1) + 1) / 2; }

// --trace's window in `block`, after its measured pairs, while its setup still runs.
void trace_if_chosen(const Settings& settings, Analysis& analysis, const Variant& a,
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
Measurements measure_pairs(const Settings& settings, Analysis& analysis, const Variant& a,
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
    for (const auto& panel : kLatencyPanels)
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

Analysis measure_and_analyze(const Settings& settings) {
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
  for (std::size_t i = 0; i < measurements.secondary_a.size(); ++i) {
    if (!offered_by_all(kLatencyPanels[i], measurements.secondary_a[i],
                        measurements.secondary_b[i]))
      continue;
    SecondaryMetric metric;
    metric.name = kLatencyPanels[i].name;
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
Analysis replay(const std::string& path, const Settings& settings) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  auto record = nlohmann::json::parse(in);
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

int run(Settings& settings) {
  std::vector<Analysis> analyses;
  if (!settings.replay.empty()) {
    for (const auto& path : settings.replay) analyses.push_back(replay(path, settings));
  } else {
    if (settings.a.empty() || settings.b.empty() || settings.command.empty())
      throw CLI::ValidationError("need A B -- COMMAND (or --replay)");
    analyses.push_back(measure_and_analyze(settings));
  }
  print_table(analyses, !settings.no_header);
  if (!settings.trace_dir.empty())
    write_file(settings.trace_dir + "/summary.json",
               to_json(analyses.front().traces).dump(2) + "\n");
  if (!settings.json_path.empty()) {
    nlohmann::json out = analyses.size() == 1 ? to_json(analyses.front()) : nlohmann::json::array();
    if (analyses.size() > 1)
      for (const auto& analysis : analyses) out.push_back(to_json(analysis));
    write_file(settings.json_path, out.dump(2) + "\n");
  }
  if (!settings.svg_path.empty()) write_file(settings.svg_path, svg_plot(analyses.front()));
  return EXIT_SUCCESS;
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  Settings settings;
  // Everything after "--" is the workload, untouched by the option parser.
  int options_end = argc;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      options_end = i;
      settings.command.assign(argv + i + 1, argv + argc);
      break;
    }

  CLI::App app{
      "binder-ab: one workload against binder devices A and B, interleaved A B A B ...; "
      "usage: binder-ab [options] A B -- COMMAND ARGS... ({dev} = the device)"};
  app.set_version_flag("--version", cused::version_text("binder-ab", nullptr));
  app.add_option("A", settings.a, "device path, or NAME[:SPEC] under --mount");
  app.add_option("B", settings.b, "device path, or NAME[:SPEC] under --mount");
  app.add_option("--mount", settings.mount_dir, "where NAME[:SPEC] devices live")
      ->capture_default_str();
  app.add_option("--name", settings.name, "the row's name in the table (default: the command)");
  app.add_option("--runs", settings.schedule.pairs,
                 fmt::format("runs per variant, at least {} (the fewest that get a verdict; "
                             "default: fill --time)",
                             kMinPairsForVerdict))
      ->check(CLI::Range(static_cast<int>(kMinPairsForVerdict), std::numeric_limits<int>::max()));
  app.add_option("--time", settings.budget_seconds, "time budget in seconds, warm-up included")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", settings.schedule.warmup_pairs, "warm-up runs per variant, discarded")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--run-timeout", settings.run_limit_seconds, "seconds before a run is killed")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--metric", settings.metric,
                 "regex whose first group is the metric, last match wins (default: "
                 "binder-throughput's iterations per sec)");
  app.add_option("--metric-name", settings.metric_name, "the metric's name in the table");
  app.add_flag("--lower-is-better", settings.lower_is_better, "e.g. for a latency metric");
  app.add_flag("--count-metric", settings.count_metric,
               "the metric counts work (e.g. ioctls per call) rather than timing it: the verdict "
               "reads \"B needs N % fewer METRIC\", not \"faster\"");
  app.add_flag("--latency", settings.latency,
               "also read binder-throughput's 50 % and 99 % latencies from each run (its precise "
               "line, else binderThroughputTest's bucket midpoints): their B/A "
               "after the table, a plot panel each beside the main metric, and in the JSON");
  app.add_option("--confidence", settings.bootstrap.confidence, "confidence level")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.999));
  app.add_option("--resamples", settings.bootstrap.resamples, "bootstrap resamples")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  auto* seed = app.add_option("--seed", settings.bootstrap.seed,
                              "bootstrap seed (default: random, recorded in the JSON)");
  app.add_option("--detect", settings.target_percent,
                 "the difference (percent) the run should resolve; it says if it could not")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--json", settings.json_path, "write every run and the statistics here");
  app.add_option("--svg", settings.svg_path, "write a plot of both distributions here");
  app.add_option("--trace", settings.trace_dir,
                 "trace one extra run of each variant (in the middle block), outside the measured "
                 "runs, with the daemon of its device writing DIR/A.trace and DIR/B.trace; their "
                 "lock waits and holds per priority after the table, in DIR/summary.json, the "
                 "--json record and a panel of the --svg plot (docs/ab.md)");
  app.add_option("--replay", settings.replay, "re-analyze runs saved with --json (one row each)");
  app.add_option("--scale-b", settings.scale_b,
                 "with --replay: multiply B's runs by this factor, to see whether the measured "
                 "noise would resolve a known difference (calibration)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-header", settings.no_header, "print the table's rows only");
  app.add_flag("-v,--verbose", settings.verbose, "print each pair as it is measured (stderr)");
  app.add_option("--progress", settings.progress,
                 "progress on stderr while a row runs: live (one line redrawn), plain (a line "
                 "every --progress-every seconds), none, or auto (live on a terminal)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "live", "plain", "none"}));
  app.add_option("--progress-every", settings.progress_seconds,
                 "seconds between plain progress lines")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--blocks", settings.blocks.blocks,
                 "run the experiment as K independent blocks, each with --block-setup started "
                 "anew and A/B order drawn at random; the interval is the two-level bootstrap "
                 "over them (a verdict needs at least 3)")
      ->check(CLI::Range(2, 1000));
  app.add_option("--block-setup", settings.blocks.setup,
                 "with --blocks: a shell command that makes a block's fresh state (a cused with "
                 "the devices, their servicemanagers, background load) and runs until stopped "
                 "(SIGTERM, then its process group); CUSED_AB_BLOCK is the block's number");
  app.add_flag("--block-signals-ready", settings.blocks.setup_signals_ready,
               "with --block-setup: a block is ready once the setup has created the file "
               "$CUSED_AB_READY names (servicemanagers up, background load started), not as soon "
               "as its devices answer");
  app.add_option("--block-ready", settings.ready_seconds,
                 "with --block-setup: seconds the devices may take to answer")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--aa", settings.aa,
               "an A/A experiment: B must be A's variant on a device of its own (calibration: "
               "how often does binder-ab call identical variants different?)");
  app.add_flag("--dev-binder", settings.dev_binder,
               "the workload opens /dev/binder and takes no device (Google's "
               "binderThroughputTest): run it where /dev/binder is the variant's device, in a "
               "private mount namespace (tools/with-dev-binder; needs CAP_SYS_ADMIN)");
  app.add_option("--with-dev-binder", settings.dev_binder_helper,
                 "with --dev-binder: the with-dev-binder program (default: beside binder-ab)");
  try {
    app.parse(options_end, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  settings.seed_given = seed->count() > 0;
  if (!settings.seed_given) settings.bootstrap.seed = std::random_device{}();
  settings.schedule.budget = std::chrono::duration<double>(settings.budget_seconds);
  settings.blocks.ready_limit = std::chrono::duration<double>(settings.ready_seconds);
  // The blocks' A/B orders follow the seed, so that a run is repeatable with --seed.
  settings.blocks.order_seed = settings.bootstrap.seed ^ 0x9e3779b97f4a7c15ULL;
  if (!settings.blocks.setup.empty() && settings.blocks.blocks == 0)
    return app.exit(CLI::ValidationError("--block-setup needs --blocks K"));
  if (settings.blocks.setup_signals_ready && settings.blocks.setup.empty())
    return app.exit(CLI::ValidationError("--block-signals-ready needs --block-setup CMD"));
  settings.schedule.run_limit = std::chrono::duration<double>(settings.run_limit_seconds);
  if (!settings.trace_dir.empty() && !settings.replay.empty())
    return app.exit(CLI::ValidationError("--trace measures: it does not go with --replay"));
  try {
    return run(settings);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    fmt::print(stderr, "binder-ab: {}\n", error.what());
    return EXIT_FAILURE;
  }
}

}  // namespace

int main(int argc, char** argv) {
  cused::tools::ab::watch_stop_signals();  // before any thread: every one inherits the mask
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}
