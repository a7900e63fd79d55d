// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace cused::tools::ab {

double sorted_quantile(std::span<const double> sorted, double p) {
  double position = p * static_cast<double>(sorted.size() - 1);
  auto below = static_cast<std::size_t>(std::floor(position));
  std::size_t above = std::min(below + 1, sorted.size() - 1);
  double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

namespace {

std::vector<double> sorted_copy(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("no values to summarize");
  std::vector<double> copy(values.begin(), values.end());
  std::sort(copy.begin(), copy.end());
  return copy;
}

// One bootstrap replicate's median: `scratch` is reused across replicates to avoid allocating.
double median_of(std::vector<double>& scratch) {
  std::sort(scratch.begin(), scratch.end());
  return sorted_quantile(scratch, 0.5);
}

}  // namespace

double quantile(std::span<const double> values, double p) {
  return sorted_quantile(sorted_copy(values), p);
}

double median(std::span<const double> values) { return quantile(values, 0.5); }

Summary summarize(std::span<const double> values) {
  auto sorted = sorted_copy(values);
  Summary summary;
  summary.count = sorted.size();
  summary.median = sorted_quantile(sorted, 0.5);
  summary.q1 = sorted_quantile(sorted, 0.25);
  summary.q3 = sorted_quantile(sorted, 0.75);
  summary.min = sorted.front();
  summary.max = sorted.back();
  std::vector<double> deviations;
  for (double value : sorted) deviations.push_back(std::abs(value - summary.median));
  summary.mad = median(deviations);
  return summary;
}

RatioInterval bootstrap_ratio_of_medians(std::span<const double> a, std::span<const double> b,
                                         const BootstrapOptions& options) {
  if (a.empty() || b.empty()) throw std::invalid_argument("bootstrap needs runs of A and B");
  if (options.paired && a.size() != b.size())
    throw std::invalid_argument("paired bootstrap needs as many runs of A as of B");
  if (options.resamples < 1 || options.confidence <= 0 || options.confidence >= 1)
    throw std::invalid_argument("bootstrap needs resamples >= 1 and 0 < confidence < 1");
  double median_a = median(a);
  if (median_a == 0) throw std::invalid_argument("median of A is 0: no ratio");

  std::mt19937_64 random(options.seed);
  std::uniform_int_distribution<std::size_t> pick_a(0, a.size() - 1);
  std::uniform_int_distribution<std::size_t> pick_b(0, b.size() - 1);
  std::vector<double> ratios, resample_a(a.size()), resample_b(b.size());
  ratios.reserve(static_cast<std::size_t>(options.resamples));
  for (int r = 0; r < options.resamples; ++r) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      std::size_t index = pick_a(random);
      resample_a[i] = a[index];
      if (options.paired) resample_b[i] = b[index];
    }
    if (!options.paired)
      for (double& value : resample_b) value = b[pick_b(random)];
    double denominator = median_of(resample_a);
    if (denominator != 0) ratios.push_back(median_of(resample_b) / denominator);
  }
  if (ratios.empty()) throw std::invalid_argument("every resample of A has median 0");
  std::sort(ratios.begin(), ratios.end());
  double tail = (1 - options.confidence) / 2;
  RatioInterval interval;
  interval.ratio = median(b) / median_a;
  interval.low = sorted_quantile(ratios, tail);
  interval.high = sorted_quantile(ratios, 1 - tail);
  interval.confidence = options.confidence;
  interval.pairs = std::min(a.size(), b.size());
  return interval;
}

namespace {

// "faster"/"slower", or for an amount "fewer"/"more" of the metric: B's change in words.
std::string change_words(const Verdict& verdict, Better better, Wording wording) {
  bool b_better = verdict.improvement_percent > 0;
  if (wording == Wording::speed) return b_better ? "faster" : "slower";
  bool b_lower = b_better == (better == Better::lower);
  return b_lower ? "fewer" : "more";
}

}  // namespace

Verdict judge(const RatioInterval& interval, Better better, Wording wording,
              const std::string& metric_name) {
  // Percent change of the metric in the direction that is better: +5 means B is 5 % better.
  auto gain = [better](double ratio) {
    return better == Better::higher ? (ratio - 1) * 100 : (1 - ratio) * 100;
  };
  Verdict verdict;
  if (interval.pairs < kMinPairsForVerdict) {
    verdict.too_few_pairs = true;
    verdict.text = fmt::format("too few pairs for a verdict ({}, at least {})", interval.pairs,
                               kMinPairsForVerdict);
    verdict.brief = "too few pairs";
    return verdict;
  }
  verdict.improvement_percent = gain(interval.ratio);
  verdict.low_percent = std::min(gain(interval.low), gain(interval.high));
  verdict.high_percent = std::max(gain(interval.low), gain(interval.high));
  verdict.detected = !interval.contains(1.0);
  std::string level = fmt::format("{:.3g}", interval.confidence * 100);
  if (!verdict.detected) {
    verdict.text = fmt::format("no difference detected at {} % (CI {:+.1f} … {:+.1f} %)", level,
                               verdict.low_percent, verdict.high_percent);
    verdict.brief = "no difference";
    return verdict;
  }
  // The interval in the direction the sentence names: "slower (CI 190 … 243 %)", not a
  // negative improvement.
  bool faster = verdict.improvement_percent > 0;
  double from = faster ? verdict.low_percent : -verdict.high_percent;
  double to = faster ? verdict.high_percent : -verdict.low_percent;
  double percent = std::abs(verdict.improvement_percent);
  std::string change = change_words(verdict, better, wording);
  std::string interval_text = fmt::format("({} % CI {:.1f} … {:.1f} %)", level, from, to);
  if (wording == Wording::speed)
    verdict.text = fmt::format("B is {:.1f} % {} {}", percent, change, interval_text);
  else
    verdict.text = fmt::format("B {} {:.1f} % {} {} {}", better == Better::lower ? "needs" : "has",
                               percent, change, metric_name, interval_text);
  verdict.brief = fmt::format("B {:.1f} % {}", percent, change);
  return verdict;
}

std::string detection_note(const Verdict& verdict, double target_percent) {
  if (verdict.too_few_pairs) return "more runs (--time, --runs) are needed";
  if (verdict.detected) return fmt::format("resolved (target {:g} %)", target_percent);
  if (verdict.low_percent > -target_percent && verdict.high_percent < target_percent)
    return fmt::format("a difference of {:g} % or more is ruled out", target_percent);
  return fmt::format(
      "could not resolve a {:g} % difference: more runs (--time, --runs) or a quieter machine are "
      "needed",
      target_percent);
}

}  // namespace cused::tools::ab
