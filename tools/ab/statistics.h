// SPDX-License-Identifier: GPL-2.0-only
// binder-ab's statistics: robust summaries of one variant's runs and the B/A ratio of medians with
// a bootstrap confidence interval. Medians and quantiles, not means: a run that a noisy neighbour
// slowed down is an outlier, and one outlier must not move the answer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cused::tools::ab {

// The `p` quantile (0..1) of `values`, interpolated linearly between order statistics (R's and
// numpy's default). Throws std::invalid_argument on an empty input.
double quantile(std::span<const double> values, double p);
double median(std::span<const double> values);
// The p-quantile of values already sorted ascending, interpolated between neighbours.
double sorted_quantile(std::span<const double> sorted, double p);

struct Summary {
  std::size_t count = 0;
  double median = 0;
  double q1 = 0, q3 = 0;  // quartiles
  double mad = 0;         // median absolute deviation from the median (unscaled)
  double min = 0, max = 0;

  double iqr() const { return q3 - q1; }
  // IQR over the median: the run-to-run spread in the table, comparable across metrics.
  double relative_spread() const { return median != 0 ? iqr() / median : 0; }
};
Summary summarize(std::span<const double> values);

struct BootstrapOptions {
  int resamples = 10000;
  double confidence = 0.95;
  std::uint64_t seed = 1;
  // Resample (A_i, B_i) pairs together: runs i of A and B ran next to each other, so a slow
  // spell of the machine hits both, and resampling the pairs keeps that out of the ratio.
  bool paired = true;
};

struct RatioInterval {
  double ratio = 0;  // median(B) / median(A)
  double low = 0, high = 0;
  double confidence = 0;
  std::size_t pairs = 0;  // the runs of each variant it was made from (the fewer side's, unpaired)

  bool contains(double value) const { return low <= value && value <= high; }
};

// Percentile bootstrap of median(B)/median(A). Paired resampling needs a.size() == b.size().
// Throws std::invalid_argument on empty inputs, mismatched pairs or a zero median of A.
RatioInterval bootstrap_ratio_of_medians(std::span<const double> a, std::span<const double> b,
                                         const BootstrapOptions& options = {});

enum class Better { higher, lower };

// The fewest pairs that get a verdict. Below it the percentile bootstrap of a median calls
// identical variants different far more often than its 5 %: in simulated A/A experiments
// (tests/unit/tools/ab_statistics_test.cc prints the rates; docs/ab.md records them) 26 % of
// them get a verdict "B is X % faster/slower" at 3 pairs, 12 % at 4, 5.6 to 6.6 % at 5 to 7, and
// at most 6 % from 8 on. Fewer pairs give "too few pairs", never a verdict.
inline constexpr std::size_t kMinPairsForVerdict = 8;

// How a verdict words B's change: as speed ("B is 3.7 % faster") for a rate or a time, as an
// amount of the metric ("B needs 33.4 % fewer ioctls per call") for a count of work, which is
// not a speed.
enum class Wording { speed, amount };

// What the interval says about B against A, in words: "B is 3.7 % faster (95 % CI 1.2 … 5.5 %)"
// when the interval excludes 1.0, else "no difference detected at 95 %"; `brief` is the table's
// cell ("B 3.7 % faster", "no difference"); "too few pairs" when it was made from fewer than
// kMinPairsForVerdict pairs.
struct Verdict {
  bool too_few_pairs = false;
  bool detected = false;
  bool unresolved = false;         // bucket-quantized runs that cannot tell (quantized_verdict.h)
  double improvement_percent = 0;  // B's gain over A: positive = B better in `better`'s sense
  double low_percent = 0, high_percent = 0;
  std::string text;
  std::string brief;
};
Verdict judge(const RatioInterval& interval, Better better, Wording wording = Wording::speed,
              const std::string& metric_name = {});

// Whether the run could answer "is there a difference of `target_percent` or more?": yes (the
// verdict), ruled out (the whole interval lies within +-target), or could not tell (the interval
// reaches past +-target and includes 0): then more runs or a quieter machine are needed.
std::string detection_note(const Verdict& verdict, double target_percent);

}  // namespace cused::tools::ab
