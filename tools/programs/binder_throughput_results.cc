// SPDX-License-Identifier: GPL-2.0-only
#include "tools/programs/binder_throughput_results.h"

#include <fmt/format.h>

namespace cused::tools {

namespace {

// Numbers print as iostream's default does (6 significant digits), so that scripts written
// for binderThroughputTest parse this tool's output too.
std::string number(double value) { return fmt::format("{:g}", value); }

}  // namespace

std::string ThroughputResults::precise_percentiles_line() const {
  std::string out = fmt::format("precise latency percentiles (us, within {:.1g} %):",
                                LatencyHistogram::kMaxRelativeError * 100);
  for (auto [label, fraction] :
       {std::pair{"P50", 0.5}, {"P90", 0.9}, {"P99", 0.99}, {"P99.9", 0.999}})
    out += fmt::format(" {} {}", label, number(latencies.quantile(fraction) / 1e3));
  return out + "\n";
}

std::string ThroughputResults::report() const {
  std::string out;
  if (transactions == 0) return "no transactions\n";
  if (long_transactions > 0)
    out += fmt::format(
        "{}% of transactions took longer than estimated max latency. Consider setting -m to be "
        "higher than {} microseconds\n",
        number(static_cast<double>(long_transactions) / static_cast<double>(transactions)),
        worst_ns / 1000);
  out += fmt::format(
      "average:{}ms worst:{}ms best:{}ms\n",
      number(static_cast<double>(total_ns) / static_cast<double>(transactions) / 1e6),
      number(static_cast<double>(worst_ns) / 1e6), number(static_cast<double>(best_ns) / 1e6));
  // Each percentile is the midpoint of the bucket where the running count first reaches it.
  constexpr std::array<std::pair<int, double>, 4> kPercentiles{
      {{50, 0.5}, {90, 0.9}, {95, 0.95}, {99, 0.99}}};
  double width_ms = static_cast<double>(bucket_width_ns()) / 1e6;
  double count = static_cast<double>(transactions);
  std::uint64_t below = 0;
  for (std::uint32_t i = 0; i < kBuckets; ++i) {
    double midpoint = width_ms * i + 0.5 * width_ms;
    for (auto [label, fraction] : kPercentiles) {
      double target = fraction * count;
      if (below < target && below + buckets[i] >= target)
        out += fmt::format("{}%: {} ", label, number(midpoint));
    }
    below += buckets[i];
  }
  out += "\n";
  out += precise_percentiles_line();
  out += fmt::format("ioctls per transaction: {}\n", number(static_cast<double>(ioctls) / count));
  return out;
}

}  // namespace cused::tools
