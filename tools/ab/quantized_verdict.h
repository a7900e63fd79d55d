// SPDX-License-Identifier: GPL-2.0-only
// The verdict on a metric whose every run is a bucket midpoint (Google's binderThroughputTest's
// latency percentiles, 128 buckets over -m): a median of such runs moves in half-bucket steps and
// the bootstrap's bounds are ratios of midpoints, so an interval such as [1.000, 1.000] or
// [0.455, 0.778] around 0.778 says what the buckets are, not what was measured.
#pragma once

#include <string>

#include "tools/ab/statistics.h"

namespace cused::tools::ab {

// "cannot resolve: ..." (Verdict::unresolved) when both medians lie in one bucket, are less than
// one bucket apart, or the interval ends at its point (a bound that is a step between midpoints)
// while the buckets alone (each median anywhere in its bucket) allow B/A = 1; else judge()'s
// verdict, which then names the buckets and, for an interval ending at its point, the range the
// buckets allow. `bucket` is their width in `unit`.
Verdict judge_quantized(const RatioInterval& interval, Better better, double median_a,
                        double median_b, double bucket, const std::string& unit);

}  // namespace cused::tools::ab
