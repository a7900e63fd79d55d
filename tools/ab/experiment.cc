#include "tools/ab/experiment.h"

#include <fmt/format.h>

#include <stdexcept>

namespace cused::tools::ab {

namespace {

using Clock = std::chrono::steady_clock;

std::string tail_of(const std::string& output, std::size_t bytes = 2000) {
  return output.size() <= bytes ? output : "..." + output.substr(output.size() - bytes);
}

double run_once(const Variant& variant, const std::vector<std::string>& command,
                const std::regex& metric, const Schedule& schedule) {
  auto argv = substitute(command, variant);
  auto result = run_command(argv, schedule.run_limit);
  if (!result.succeeded())
    throw std::runtime_error(fmt::format("{} ({}): {} {}\n{}", variant.label, variant.device,
                                         argv[0], result.describe_failure(),
                                         tail_of(result.output)));
  auto value = extract_metric(result.output, metric);
  if (!value)
    throw std::runtime_error(fmt::format("{} ({}): no metric in the output of {}\n{}",
                                         variant.label, variant.device, argv[0],
                                         tail_of(result.output)));
  return *value;
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
                     const std::regex& metric, const Schedule& schedule, std::FILE* progress) {
  Measurements measurements;
  auto start = Clock::now();
  for (int i = 0; i < schedule.warmup_pairs; ++i) {
    double warm_a = run_once(a, command, metric, schedule);
    double warm_b = run_once(b, command, metric, schedule);
    if (progress) fmt::print(progress, "warm-up {}: A {:g}  B {:g}\n", i + 1, warm_a, warm_b);
    ++measurements.warmup_pairs;
  }
  auto measuring_start = Clock::now();
  while (another_pair_fits(measurements, schedule, Clock::now() - start,
                           Clock::now() - measuring_start)) {
    measurements.a.push_back(run_once(a, command, metric, schedule));
    measurements.b.push_back(run_once(b, command, metric, schedule));
    if (progress)
      fmt::print(progress, "pair {}: A {:g}  B {:g}\n", measurements.a.size(),
                 measurements.a.back(), measurements.b.back());
  }
  measurements.elapsed = Clock::now() - start;
  return measurements;
}

}  // namespace cused::tools::ab
