// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/experiment_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/version.h"
#include "tools/ab/comparison.h"
#include "tools/ab/experiment_block.h"
#include "tools/ab/experiment_file.h"
#include "tools/ab/experiment_workload.h"
#include "tools/ab/mount_point.h"
#include "tools/ab/published_table.h"
#include "tools/build_commit.h"

namespace cused::tools::ab {

namespace {

struct Programs {
  BlockPrograms block;
  WorkloadPrograms workload;
};

bool executable(const std::filesystem::path& path) { return access(path.c_str(), X_OK) == 0; }

// cused beside binder-ab's build (build/cused/cused next to build/tools/binder-ab), else the
// installed one on PATH.
std::string default_cused() {
  auto built = std::filesystem::path(sibling_program("..")) / "cused" / "cused";
  return executable(built) ? std::filesystem::weakly_canonical(built).string() : "cused";
}

std::string default_binder_throughput_test() {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (std::size_t start = 0; start <= dirs.size();) {
    auto end = dirs.find(':', start);
    auto dir = dirs.substr(start, end == dirs.npos ? dirs.npos : end - start);
    if (!dir.empty() && executable(std::filesystem::path(dir) / "binderThroughputTest"))
      return (std::filesystem::path(dir) / "binderThroughputTest").string();
    if (end == dirs.npos) break;
    start = end + 1;
  }
  return ".deps/aosp/build/binderThroughputTest";  // where tools/bootstrap builds it
}

Programs find_programs(const RunOptions& options) {
  Programs programs;
  auto cused = options.cused.empty() ? default_cused() : options.cused;
  programs.block = {.cused = cused,
                    .servicemanager = sibling_program("servicemanager"),
                    .binder_background = sibling_program("binder-background"),
                    .binder_messaging = sibling_program("binder-messaging")};
  programs.workload = {.cused = cused,
                       .binder_throughput = sibling_program("binder-throughput"),
                       .binder_throughput_test = options.binder_throughput_test.empty()
                                                     ? default_binder_throughput_test()
                                                     : options.binder_throughput_test,
                       .binder_sendvec = sibling_program("binder-sendvec"),
                       .binder_messaging = sibling_program("binder-messaging")};
  return programs;
}

// The file as this run runs it: --quick's keys, then --set's.
ExperimentJson effective_file(const std::string& path, const RunOptions& options) {
  auto file = read_experiment_file(path);
  // --quick first, so that --set time=5 still sets the time of a quick run.
  if (options.quick) file = quick_version(file);
  for (const auto& setting : options.settings) {
    auto equals = setting.find('=');
    if (equals == setting.npos)
      throw ExperimentError(fmt::format("--set {}: [NAME:]KEY=VALUE is needed", setting));
    auto key = setting.substr(0, equals);
    // NAME:KEY sets the key in the file named NAME only (tools/reproduce's alloc-lock options).
    if (auto colon = key.find(':'); colon != key.npos) {
      if (file.value("name", std::string{}) != key.substr(0, colon)) continue;
      key = key.substr(colon + 1);
    }
    file = with_setting(file, key, setting.substr(equals + 1));
  }
  if (options.trace) file["trace"] = true;
  return file;
}

std::string with_keys(std::string variant, const std::string& keys) {
  if (keys.empty()) return variant;
  return variant.empty() ? keys : variant + "," + keys;
}

// The cell as measured: --add-a/-b on top of its variants, and with --aa B given A's.
Experiment adjusted(Experiment experiment, const RunOptions& options) {
  experiment.a.variant = with_keys(experiment.a.variant, options.add_a);
  experiment.b.variant = with_keys(experiment.b.variant, options.add_b);
  if (options.aa) experiment.b.variant = experiment.a.variant;
  return experiment;
}

ComparisonSettings comparison_settings(const ExperimentCell& cell, const RunOptions& options,
                                       const Programs& programs, const std::string& mount) {
  const auto& experiment = cell.experiment;
  auto workload = workload_command(experiment, mount, programs.workload);
  ComparisonSettings settings;
  settings.a = experiment.a.name + ":" + effective_variant(experiment, experiment.a);
  settings.b = experiment.b.name + ":" + effective_variant(experiment, experiment.b);
  settings.command = workload.command;
  settings.dev_binder = workload.dev_binder;
  settings.mount_dir = mount;
  settings.name = experiment.title.empty() ? cell.name : experiment.title;
  settings.metric = workload.metric;
  settings.metric_name = workload.metric_name;
  settings.lower_is_better = workload.lower_is_better;
  settings.count_metric = workload.counts;
  settings.latency = !experiment.latency.empty();
  settings.percentiles = experiment.latency;
  settings.schedule.budget = std::chrono::duration<double>(experiment.time);
  settings.schedule.run_limit = std::chrono::duration<double>(settings.run_limit_seconds);
  settings.bootstrap.confidence = experiment.confidence;
  settings.target_percent = experiment.detect;
  settings.seed_given = options.seed.has_value();
  settings.bootstrap.seed = options.seed ? *options.seed : std::random_device{}();
  settings.blocks.order_seed = settings.bootstrap.seed ^ 0x9e3779b97f4a7c15ULL;
  settings.progress = options.progress;
  settings.progress_seconds = options.progress_seconds;
  settings.aa = options.aa;
  if (experiment.trace) settings.trace_dir = options.out + "/" + cell.name + "-trace";
  return settings;
}

// One comparison: its mount, its blocks' state made by binder-ab, measured and analysed.
Analysis run_cell(const ExperimentCell& cell, const RunOptions& options, const Programs& programs) {
  MountPoint mount;
  auto settings = comparison_settings(cell, options, programs, mount.path());
  const auto& experiment = cell.experiment;
  fmt::print(stderr, "== {}: A {}, B {}, {:g} s in {} block(s), each on fresh state\n", cell.name,
             settings.a, settings.b, experiment.time, experiment.blocks);
  if (!settings.trace_dir.empty()) std::filesystem::create_directories(settings.trace_dir);
  if (experiment.blocks == 1) {  // one start: the pairwise interval of its pairs
    ExperimentBlock block(experiment, programs.block, mount.path());
    return measure_and_analyze(settings);
  }
  settings.blocks.blocks = experiment.blocks;
  settings.blocks.make_state = [&experiment, &programs, path = mount.path()](int) {
    return std::make_unique<ExperimentBlock>(experiment, programs.block, path);
  };
  return measure_and_analyze(settings);
}

// The record of one file's run, its keys in the file's order.
ExperimentJson run_record(const ExperimentJson& file, const RunOptions& options,
                          const std::vector<Analysis>& analyses) {
  ExperimentJson record;
  // The file as run (--quick and --set applied) and the options that change what its variants
  // are: `binder-ab run RECORD` runs the same experiment again.
  record["experiment"] = file;
  record["build"] = cused::version_text("binder-ab", nullptr);
  record["commit"] = std::string(kBuildCommit);
  record["options"] = {{"quick", options.quick},
                       {"aa", options.aa},
                       {"add_a", options.add_a},
                       {"add_b", options.add_b}};
  record["comparisons"] = ExperimentJson::array();
  for (const auto& analysis : analyses)
    record["comparisons"].push_back(ExperimentJson::parse(to_json(analysis).dump()));
  return record;
}

// A record's options for its rerun, where the command line leaves them unset.
RunOptions with_recorded_options(RunOptions options, const std::string& path) {
  std::ifstream in(path);
  auto json = ExperimentJson::parse(in, nullptr, false, true);
  if (!json.is_object() || !json.contains("comparisons") || !json.contains("options"))
    return options;
  const auto& recorded = json.at("options");
  options.aa = options.aa || recorded.value("aa", false);
  if (options.add_a.empty()) options.add_a = recorded.value("add_a", std::string{});
  if (options.add_b.empty()) options.add_b = recorded.value("add_b", std::string{});
  return options;
}

// The tables of `runs`: binder-ab's (every comparison) and the published figures beside cused's
// (a file's first comparison, a sweep's first cell, under the file's name).
void print_tables(const std::vector<ExperimentJson>& runs, const std::string& table, bool header) {
  std::vector<Analysis> analyses;
  std::vector<PublishedRow> published;
  for (const auto& run : runs) {
    auto comparisons = nlohmann::json::parse(run.at("comparisons").dump());
    ComparisonSettings replay_settings;
    for (const auto& comparison : comparisons)
      analyses.push_back(replay_record(comparison, replay_settings));
    auto cells = expand_sweep(run.at("experiment"));
    const auto& experiment = cells.front().experiment;
    if (experiment.published && !comparisons.empty())
      published.push_back({experiment.name, *experiment.published, comparisons.front()});
  }
  if ((table == "ab" || table == "both") && !analyses.empty()) print_table(analyses, header);
  if ((table == "published" || table == "both") && !published.empty()) {
    if (table == "both") fmt::print("\n");
    fmt::print("{}", published_table(published));
  }
}

}  // namespace

bool is_run_record(const nlohmann::json& record) {
  return record.is_object() && record.contains("experiment") && record.contains("comparisons");
}

void print_run_record(const nlohmann::json& record, bool header) {
  print_tables({ExperimentJson::parse(record.dump())}, "both", header);
}

int run_experiment_files(const RunOptions& options) {
  // Every file read and every cell parsed before anything runs: a typo in the last file's last
  // key stops the run before its first minute.
  struct File {
    ExperimentJson json;
    std::vector<ExperimentCell> cells;
    RunOptions options;
  };
  std::vector<File> files;
  for (const auto& path : options.files) {
    auto file_options = with_recorded_options(options, path);
    auto file = effective_file(path, file_options);
    try {
      auto cells = expand_sweep(file);
      for (auto& cell : cells) cell.experiment = adjusted(std::move(cell.experiment), file_options);
      files.push_back({file, std::move(cells), file_options});
    } catch (const ExperimentError& error) {
      throw ExperimentError(fmt::format("{}: {}", path, error.what()));
    }
  }
  auto programs = find_programs(options);
  std::filesystem::create_directories(options.out);
  std::vector<ExperimentJson> runs;
  for (const auto& [file, cells, file_options] : files) {
    std::vector<Analysis> analyses;
    for (const auto& cell : cells) {
      analyses.push_back(run_cell(cell, file_options, programs));
      auto base = options.out + "/" + cell.name;
      write_file(base + ".json", to_json(analyses.back()).dump(2) + "\n");
      write_file(base + ".svg", svg_plot(analyses.back()));
    }
    const auto& name = cells.front().experiment.name;
    // A sweep's first cell stands for the file where one row is wanted (tools/reproduce).
    if (cells.front().name != name) {
      write_file(options.out + "/" + name + ".json", to_json(analyses.front()).dump(2) + "\n");
      write_file(options.out + "/" + name + ".svg", svg_plot(analyses.front()));
    }
    runs.push_back(run_record(file, file_options, analyses));
    write_file(options.out + "/" + name + ".run.json", runs.back().dump(2) + "\n");
  }
  print_tables(runs, options.table, true);
  fmt::print(stderr,
             "binder-ab run: records in {}/NAME.run.json (binder-ab --replay or run them); per "
             "comparison {}/CELL.json and .svg\n",
             options.out, options.out);
  return EXIT_SUCCESS;
}

}  // namespace cused::tools::ab
