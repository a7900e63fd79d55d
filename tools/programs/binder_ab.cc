// SPDX-License-Identifier: GPL-2.0-only
// binder-ab: one workload against two binder devices (variants A and B) interleaved, A B A B ...,
// for a run count or a time budget; prints the medians, the B/A ratio with a bootstrap confidence
// interval and the spread as a Markdown table, and can write every run as JSON and a plot as SVG.
//
//   binder-ab [options] A B -- COMMAND ARGS...     ("{dev}" in ARGS becomes the device)
//   binder-ab --dev-binder [options] A B -- COMMAND ARGS...   (COMMAND opens /dev/binder:
//                                                  Google's binderThroughputTest)
//   binder-ab --replay RUN.json...                 (the table again from saved runs)
//   binder-ab run FILE...                          (experiment files, docs/ab.md)
//   binder-ab calibrate [-n N] FILE...             (N A/A experiments of each file: the
//                                                  false-verdict rate and the power)
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
#include "tools/ab/calibration.h"
#include "tools/ab/comparison.h"
#include "tools/ab/experiment.h"
#include "tools/ab/experiment_file.h"
#include "tools/ab/experiment_runner.h"
#include "tools/ab/kernel_design_names.h"
#include "tools/ab/latency.h"
#include "tools/ab/progress.h"
#include "tools/ab/report.h"
#include "tools/ab/stop_signals.h"
#include "tools/ab/trace_report.h"
#include "tools/ab/traced_run.h"
#include "tools/ab/variant_check.h"

namespace {

using namespace cused::tools::ab;

using Settings = ComparisonSettings;

int run(Settings& settings) {
  std::vector<Analysis> analyses;
  if (!settings.replay.empty()) {
    for (const auto& path : settings.replay) {
      std::ifstream in(path);
      if (!in) throw std::runtime_error("cannot read " + path);
      auto record = nlohmann::json::parse(in);
      if (is_run_record(record)) {  // binder-ab run's record: its tables, as the run printed them
        if (settings.replay.size() > 1)
          throw CLI::ValidationError("--replay: a run record (NAME.run.json) is replayed alone");
        print_run_record(record, !settings.no_header);
        return EXIT_SUCCESS;
      }
      analyses.push_back(replay_record(record, settings));
    }
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

// The options `binder-ab run` and `binder-ab calibrate` share.
void add_run_options(CLI::App& app, RunOptions& options) {
  app.add_option(
      "--set", options.settings,
      "[NAME:]KEY=VALUE: a key of the file set first (dotted: workload.payload=16384, "
      "conditions.memcg={\"mib\":128}; NAME: in the file named NAME only); VALUE is JSON, "
      "else a string");
  app.add_option("--add-a", options.add_a, "variant keys on top of every comparison's A");
  app.add_option("--add-b", options.add_b, "variant keys on top of every comparison's B");
  app.add_flag("--quick", options.quick,
               "seconds per comparison: time 2, 3 blocks, then the file's \"quick\" keys (checks "
               "that every table is produced, not its values)");
  app.add_option("--out", options.out, "where the records and plots go")->capture_default_str();
  app.add_option("--progress", options.progress, "live, plain, none or auto, as binder-ab's")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "live", "plain", "none"}));
  app.add_option("--progress-every", options.progress_seconds,
                 "seconds between plain progress lines")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--cused", options.cused, "the cused program (default: the build's, else PATH)");
  app.add_option("--binder-throughput-test", options.binder_throughput_test,
                 "Google's binderThroughputTest (default: PATH, else "
                 ".deps/aosp/build/binderThroughputTest)");
}

// binder-ab run FILE... (docs/ab.md, "Experiment files") and binder-ab calibrate FILE...
// (docs/ab.md, "Calibration").
int run_files(int argc, char** argv, bool calibrate) {
  RunOptions options;
  int experiments = 40;
  CLI::App app{
      calibrate
          ? "binder-ab calibrate: N A/A experiments of each FILE (B gets A's variant), each "
            "comparison's false-verdict rate and its power to resolve a 5 % difference, with "
            "95 % Wilson intervals (docs/ab.md \"Calibration\")"
          : "binder-ab run: the experiments of FILE... (JSON, docs/ab.md \"Experiment files\"), "
            "each block's state made and torn down by binder-ab; FILE may be a NAME.run.json "
            "record, to run the same experiment again"};
  app.add_option("FILE", options.files, "experiment files or run records")->required();
  add_run_options(app, options);
  if (calibrate) {
    options.out = "build/ab-calibrate";
    app.get_option("--out")->default_str(options.out);
    app.add_option("-n,--experiments", experiments, "A/A experiments per file")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
  } else {
    app.add_flag("--aa", options.aa,
                 "an A/A experiment: B gets A's variant (calibration, docs/ab.md)");
    app.add_flag("--trace", options.trace, "as the file's \"trace\": true");
    app.add_option("--table", options.table,
                   "the tables printed: ab (binder-ab's), published (the file's published "
                   "figures beside cused's), both, none")
        ->capture_default_str()
        ->check(CLI::IsMember({"ab", "published", "both", "none"}));
  }
  std::uint64_t seed = 0;
  auto* seed_option = app.add_option("--seed", seed, "bootstrap seed (default: random)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  if (seed_option->count() > 0) options.seed = seed;
  try {
    return calibrate ? run_calibration(options, experiments) : run_experiment_files(options);
  } catch (const std::exception& error) {
    fmt::print(stderr, "binder-ab {}: {}\n", calibrate ? "calibrate" : "run", error.what());
    return EXIT_FAILURE;
  }
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "run") return run_files(argc - 1, argv + 1, false);
  if (argc > 1 && std::string(argv[1]) == "calibrate") return run_files(argc - 1, argv + 1, true);
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
  cused::tools::ab::accept_kernel_design_names();
  int status = cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
  cused::tools::ab::wait_if_stopping();
  return status;
}
