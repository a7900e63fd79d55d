// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "tools/ab/comparison.h"
#include "tools/ab/statistics.h"

namespace cused::tools::ab {

namespace {

constexpr double kZ95 = 1.959963984540054;  // the normal quantile of 97.5 %
constexpr double kKnownDifference = 0.95;   // B's runs scaled by this: a 5 % difference

// Whether `record` re-analysed with B x `scale_b` prints a difference; and its interval's half
// width in percent.
std::pair<bool, double> reanalysed(const nlohmann::json& record, double scale_b) {
  ComparisonSettings settings;
  settings.scale_b = scale_b;
  auto analysis = replay_record(record, settings);
  return {analysis.verdict.detected, 100 * (analysis.interval.high - analysis.interval.low) / 2};
}

std::string rate(int successes, int trials) {
  auto [low, high] = wilson_interval(successes, trials);
  return fmt::format("{:.1f} % [{:.1f}, {:.1f}]", 100.0 * successes / trials, 100 * low,
                     100 * high);
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return nlohmann::json::parse(in);
}

}  // namespace

std::pair<double, double> wilson_interval(int successes, int trials) {
  if (trials <= 0) throw std::invalid_argument("wilson_interval: no trials");
  double n = trials, p = successes / n, z2 = kZ95 * kZ95;
  double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  double half = kZ95 / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

CalibrationRow calibration_row(const std::string& name,
                               const std::vector<nlohmann::json>& aa_records) {
  CalibrationRow row{.name = name, .experiments = static_cast<int>(aa_records.size())};
  std::vector<double> half_widths;
  for (const auto& record : aa_records) {
    if (!record.value("aa", false))
      throw std::runtime_error(name + ": a record that is not an A/A experiment (--aa)");
    row.seconds = record.value("seconds", 0.0);
    row.blocks =
        std::max<int>(1, static_cast<int>(record.value("blocks", nlohmann::json::array()).size()));
    auto [false_verdict, half_width] = reanalysed(record, 1);
    row.false_verdicts += false_verdict;
    row.resolved_scaled += reanalysed(record, kKnownDifference).first;
    half_widths.push_back(half_width);
  }
  if (!half_widths.empty()) row.median_half_width = median(half_widths);
  return row;
}

std::string calibration_table(const std::vector<CalibrationRow>& rows) {
  std::string out =
      "| comparison | A/A experiments | with a verdict | false-verdict rate [95 % Wilson] | "
      "B x 0.95 resolved | power at 5 % [95 % Wilson] | median half-width of the interval |\n"
      "|---|---:|---:|---|---:|---|---:|\n";
  for (const auto& row : rows)
    out += fmt::format("| {} ({:g} s, {} block(s)) | {} | {} | {} | {} | {} | ±{:.1f} % |\n",
                       row.name, row.seconds, row.blocks, row.experiments, row.false_verdicts,
                       rate(row.false_verdicts, row.experiments), row.resolved_scaled,
                       rate(row.resolved_scaled, row.experiments), row.median_half_width);
  return out;
}

int run_calibration(RunOptions options, int experiments) {
  if (experiments < 1) throw std::invalid_argument("calibrate: -n must be at least 1");
  const std::string out = options.out;
  options.aa = true;
  options.table = "none";
  // comparison name -> its A/A records, in the order the files and their cells run
  std::vector<std::string> order;
  std::map<std::string, std::vector<nlohmann::json>> records;
  for (int k = 1; k <= experiments; ++k) {
    fmt::print(stderr, "== calibrate: A/A experiment {}/{}\n", k, experiments);
    options.out = fmt::format("{}/aa-{}", out, k);
    if (int status = run_experiment_files(options); status != EXIT_SUCCESS) return status;
    for (const auto& entry : std::filesystem::directory_iterator(options.out)) {
      if (!entry.path().string().ends_with(".run.json")) continue;
      const auto record = read_json(entry.path());
      for (const auto& comparison : record.at("comparisons")) {
        auto name = comparison.at("name").get<std::string>();
        if (!records.contains(name)) order.push_back(name);
        records[name].push_back(comparison);
      }
    }
  }
  std::vector<CalibrationRow> rows;
  nlohmann::json json = nlohmann::json::array();
  for (const auto& name : order) {
    rows.push_back(calibration_row(name, records[name]));
    const auto& row = rows.back();
    json.push_back({{"comparison", row.name},
                    {"seconds", row.seconds},
                    {"blocks", row.blocks},
                    {"experiments", row.experiments},
                    {"false_verdicts", row.false_verdicts},
                    {"resolved_with_b_scaled_0_95", row.resolved_scaled},
                    {"median_half_width_percent", row.median_half_width}});
  }
  fmt::print("{}", calibration_table(rows));
  write_file(out + "/calibration.json", json.dump(2) + "\n");
  fmt::print(stderr,
             "binder-ab calibrate: runs in {}/aa-K/, the table's numbers in {}/calibration.json\n",
             out, out);
  return EXIT_SUCCESS;
}

}  // namespace cused::tools::ab
