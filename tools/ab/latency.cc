// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/latency.h"

#include <cmath>
#include <cstdlib>
#include <regex>

namespace cused::tools::ab {

namespace {

constexpr double kBuckets = 128;  // binderThroughputTest's num_buckets
constexpr double kDefaultRangeNs = 50e6;

// The N of "-m N" or "-mN" (binder-throughput's CLI11 takes both), if `words[i]` starts one.
std::optional<double> max_latency_us(const std::vector<std::string>& words, std::size_t i) {
  const std::string& word = words[i];
  if (word.rfind("-m", 0) != 0) return std::nullopt;
  std::string digits = word == "-m" ? (i + 1 < words.size() ? words[i + 1] : "") : word.substr(2);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::strtod(digits.c_str(), nullptr);
}

// A percentile's name in binder-throughput's precise line, and its label in binderThroughputTest's
// bucket line ("" where that line has none).
struct PercentileNames {
  const char* precise;
  const char* bucket;
};
PercentileNames names_of(LatencyPercentile percentile) {
  switch (percentile) {
    case LatencyPercentile::p50:
      return {"P50", "50%"};
    case LatencyPercentile::p90:
      return {"P90", "90%"};
    case LatencyPercentile::p99:
      return {"P99", "99%"};
    case LatencyPercentile::p999:
      break;
  }
  return {"P99\\.9", ""};
}

std::regex precise_pattern(const PercentileNames& names) {
  return std::regex(std::string(R"(precise latency percentiles \(us[^)]*\):.* )") + names.precise +
                    " ([0-9.eE+-]+)");
}

std::regex bucket_pattern(const PercentileNames& names) {
  return std::regex(std::string(R"((?:^|\s))") + names.bucket + R"(: ([0-9.eE+-]+))");
}

}  // namespace

double bucket_width_ms(const std::string& output, const std::vector<std::string>& command) {
  double range_ns = kDefaultRangeNs;
  for (std::size_t i = 0; i < command.size(); ++i)
    if (auto us = max_latency_us(command, i)) range_ns = *us * 1e3;
  if (auto trained_ms =
          extract_metric(output, std::regex(R"(Max latency during training: ([0-9.eE+-]+)ms)")))
    range_ns = std::floor(2 * *trained_ms * 1e6);
  return std::max(1.0, std::floor(range_ns / kBuckets)) / 1e6;
}

std::optional<Reading> read_latency(const std::string& output, LatencyPercentile percentile,
                                    const std::vector<std::string>& command) {
  const PercentileNames names = names_of(percentile);
  if (auto us = extract_metric(output, precise_pattern(names))) return Reading{*us / 1e3, 0};
  if (*names.bucket == '\0') return std::nullopt;
  if (auto ms = extract_metric(output, bucket_pattern(names)))
    return Reading{*ms, bucket_width_ms(output, command)};
  return std::nullopt;
}

}  // namespace cused::tools::ab
