// SPDX-License-Identifier: GPL-2.0-only
// binder-throughput's precise latency record: a log-linear histogram (HdrHistogram's layout),
// one bucket per nanosecond below 256 ns, then 128 buckets per power of two, so that a bucket is
// at most 1/128 as wide as the values in it and its midpoint is within 1/256 (0.4 %) of each.
// Fixed size (59 KB) and plain data, so that a forked worker sends it through a pipe whatever its
// iteration count. Keeping every sample instead would cost 8 bytes a call in each worker and in
// the pipe (80 MB for -i 10000000) and buy nothing: 0.4 % is below any run-to-run spread.
// Written here because Debian packages HdrHistogram for Go and Java only.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace cused::tools {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kSubBucketBits;
  // Below this every value has a bucket of its own.
  static constexpr std::uint64_t kExactBelow = 2 * kSubBuckets;
  static constexpr std::size_t kBucketCount = kExactBelow + (63 - kSubBucketBits) * kSubBuckets;
  // quantile()'s bound, relative to the sample of that rank.
  static constexpr double kMaxRelativeError = 1.0 / (2 * kSubBuckets);

  void add(std::uint64_t value) {
    ++counts_[index_of(value)];
    ++count_;
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }

  void merge(const LatencyHistogram& other) {
    for (std::size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }

  std::uint64_t count() const { return count_; }

  // The sample of nearest rank ceil(q * count) (what binderThroughputTest's buckets locate too),
  // within kMaxRelativeError of it; 0 when empty.
  double quantile(double q) const {
    if (count_ == 0) return 0;
    auto rank = static_cast<std::uint64_t>(std::clamp(
        std::ceil(q * static_cast<double>(count_) - 1e-9), 1.0, static_cast<double>(count_)));
    std::uint64_t seen = 0;
    std::size_t index = 0;
    while (seen + counts_[index] < rank) seen += counts_[index++];
    double midpoint =
        static_cast<double>(lower_bound(index)) + (static_cast<double>(width(index)) - 1) / 2;
    // The extremes are known exactly; a bucket's midpoint may lie beyond them.
    return std::clamp(midpoint, static_cast<double>(min_), static_cast<double>(max_));
  }

 private:
  static std::size_t index_of(std::uint64_t value) {
    if (value < kExactBelow) return static_cast<std::size_t>(value);
    auto shift = static_cast<unsigned>(std::bit_width(value)) - 1 - kSubBucketBits;
    return static_cast<std::size_t>(kExactBelow + (shift - 1) * kSubBuckets +
                                    ((value >> shift) - kSubBuckets));
  }
  static std::uint64_t lower_bound(std::size_t index) {
    if (index < kExactBelow) return index;
    std::uint64_t k = index - kExactBelow;
    return (kSubBuckets + k % kSubBuckets) << (k / kSubBuckets + 1);
  }
  static std::uint64_t width(std::size_t index) {
    if (index < kExactBelow) return 1;
    return std::uint64_t{1} << ((index - kExactBelow) / kSubBuckets + 1);
  }

  std::array<std::uint64_t, kBucketCount> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
};

}  // namespace cused::tools
