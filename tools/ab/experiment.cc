// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace cused::tools::ab {

namespace {

using Clock = std::chrono::steady_clock;

std::string tail_of(const std::string& output, std::size_t bytes = 2000) {
  return output.size() <= bytes ? output : "..." + output.substr(output.size() - bytes);
}

// The main metric, then each secondary one, of one run.
std::vector<Reading> run_once(const Variant& variant, const std::vector<std::string>& command,
                              const MetricPatterns& metrics, const Schedule& schedule) {
  auto argv = substitute(command, variant);
  auto result = run_command(argv, schedule.run_limit);
  if (!result.succeeded())
    throw std::runtime_error(fmt::format("{} ({}): {} {}\n{}", variant.label, variant.device,
                                         argv[0], result.describe_failure(),
                                         tail_of(result.output)));
  std::vector<Reading> values;
  for (std::size_t i = 0; i <= metrics.secondary.size(); ++i) {
    std::optional<Reading> value;
    if (i > 0)
      value = metrics.secondary[i - 1](result.output);
    else if (auto main = extract_metric(result.output, metrics.main))
      value = Reading{*main, 0};
    if (!value)
      throw std::runtime_error(fmt::format("{} ({}): no {} in the output of {}\n{}", variant.label,
                                           variant.device, i == 0 ? "metric" : "secondary metric",
                                           argv[0], tail_of(result.output)));
    values.push_back(*value);
  }
  return values;
}

// One run of each, in the schedule's order; A's values first whatever ran first.
std::pair<std::vector<Reading>, std::vector<Reading>> run_pair(
    const Variant& a, const Variant& b, const std::vector<std::string>& command,
    const MetricPatterns& metrics, const Schedule& schedule) {
  if (schedule.b_first) {
    auto values_b = run_once(b, command, metrics, schedule);
    return {run_once(a, command, metrics, schedule), std::move(values_b)};
  }
  auto values_a = run_once(a, command, metrics, schedule);
  return {std::move(values_a), run_once(b, command, metrics, schedule)};
}

bool another_pair_fits(const Measurements& so_far, const Schedule& schedule,
                       std::chrono::duration<double> elapsed,
                       std::chrono::duration<double> measuring) {
  auto pairs = static_cast<int>(so_far.a.size());
  if (pairs < schedule.min_pairs) return true;
  if (schedule.pairs > 0) return pairs < schedule.pairs;
  auto per_pair = measuring / pairs;
  return elapsed + per_pair <= schedule.budget;
}

}  // namespace

Measurements measure(const Variant& a, const Variant& b, const std::vector<std::string>& command,
                     const MetricPatterns& metrics, const Schedule& schedule, std::FILE* progress,
                     const MeasureObserver& observer) {
  Measurements measurements;
  measurements.secondary_a.resize(metrics.secondary.size());
  measurements.secondary_b.resize(metrics.secondary.size());
  measurements.secondary_resolution.resize(metrics.secondary.size());
  auto start = Clock::now();
  for (int i = 0; i < schedule.warmup_pairs; ++i) {
    auto [values_a, values_b] = run_pair(a, b, command, metrics, schedule);
    double warm_a = values_a.front().value, warm_b = values_b.front().value;
    if (progress) fmt::print(progress, "warm-up {}: A {:g}  B {:g}\n", i + 1, warm_a, warm_b);
    ++measurements.warmup_pairs;
    if (observer.warmed_up) observer.warmed_up(measurements.warmup_pairs);
  }
  auto measuring_start = Clock::now();
  while (another_pair_fits(measurements, schedule, Clock::now() - start,
                           Clock::now() - measuring_start)) {
    auto [values_a, values_b] = run_pair(a, b, command, metrics, schedule);
    measurements.a.push_back(values_a.front().value);
    measurements.b.push_back(values_b.front().value);
    for (std::size_t i = 0; i < metrics.secondary.size(); ++i) {
      measurements.secondary_a[i].push_back(values_a[i + 1].value);
      measurements.secondary_b[i].push_back(values_b[i + 1].value);
      auto& resolution = measurements.secondary_resolution[i];
      resolution = std::max({resolution, values_a[i + 1].resolution, values_b[i + 1].resolution});
    }
    if (progress)
      fmt::print(progress, "pair {}: A {:g}  B {:g}\n", measurements.a.size(),
                 measurements.a.back(), measurements.b.back());
    if (observer.measured) observer.measured(measurements);
  }
  measurements.elapsed = Clock::now() - start;
  return measurements;
}

}  // namespace cused::tools::ab
