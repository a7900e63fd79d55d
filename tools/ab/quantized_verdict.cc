// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/quantized_verdict.h"

#include <fmt/format.h>

#include <cmath>

namespace cused::tools::ab {

namespace {

// Equal but for the last digits of a printed midpoint.
bool same(double x, double y) { return std::abs(x - y) <= 1e-9 * std::max(std::abs(x), 1.0); }

Verdict unresolved(std::string why) {
  Verdict verdict;
  verdict.unresolved = true;
  verdict.text = "cannot resolve: " + std::move(why);
  return verdict;
}

}  // namespace

Verdict judge_quantized(const RatioInterval& interval, Better better, double median_a,
                        double median_b, double bucket, const std::string& unit) {
  Verdict verdict = judge(interval, better);
  if (verdict.too_few_pairs) return verdict;
  std::string width = fmt::format("{:g} {}", bucket, unit);
  // Medians of midpoints step by half a bucket: closer than that is the same bucket.
  double apart = std::abs(median_b - median_a);
  if (apart < bucket / 4) return unresolved(fmt::format("both in one {} bucket", width));
  if (apart < bucket * (1 - 1e-6))
    return unresolved(fmt::format("the medians are less than one {} bucket apart", width));
  if (!same(interval.low, interval.ratio) && !same(interval.high, interval.ratio)) {
    verdict.text += fmt::format(" (in {} buckets)", width);
    return verdict;
  }
  // The interval's bounds are steps between midpoints; what the buckets alone allow is each
  // median anywhere in its bucket.
  double low = (median_b - bucket / 2) / (median_a + bucket / 2);
  double high = (median_b + bucket / 2) / (median_a - bucket / 2);
  if (median_a <= bucket / 2 || (low <= 1 && 1 <= high))
    return unresolved(fmt::format(
        "the medians are {:g} bucket(s) of {} apart and the interval [{:.3f}, {:.3f}] ends at its "
        "point {:.3f}: its bounds are steps between midpoints",
        std::round(apart / bucket * 2) / 2, width, interval.low, interval.high, interval.ratio));
  verdict.text += fmt::format(
      " (in {} buckets; the interval ends at its point, and the buckets alone put B/A in "
      "[{:.3f}, {:.3f}])",
      width, low, high);
  return verdict;
}

}  // namespace cused::tools::ab
