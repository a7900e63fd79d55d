// SPDX-License-Identifier: GPL-2.0-only
// binder-throughput's per-worker results: binderThroughputTest's fixed latency histogram, a precise
// one (latency_histogram.h), both plain data so that a worker can send them through a pipe, and
// the report in binderThroughputTest's output format with a line of precise percentiles added.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "tools/programs/latency_histogram.h"

namespace cused::tools {

struct ThroughputResults {
  static constexpr std::uint32_t kBuckets = 128;

  std::uint64_t max_latency_ns = 0;  // the histogram's range; beyond it, the last bucket
  std::uint64_t worst_ns = 0;
  std::uint64_t best_ns = UINT64_MAX;
  std::uint64_t total_ns = 0;
  std::uint64_t transactions = 0;
  std::uint64_t long_transactions = 0;  // slower than max_latency_ns
  std::uint64_t ioctls = 0;             // BINDER_WRITE_READ calls, servers included
  std::array<std::uint32_t, kBuckets> buckets{};
  LatencyHistogram latencies;

  std::uint64_t bucket_width_ns() const {
    return std::max<std::uint64_t>(1, max_latency_ns / kBuckets);
  }

  void add(std::uint64_t latency_ns) {
    if (latency_ns > max_latency_ns) ++long_transactions;
    auto index = std::min<std::uint64_t>(latency_ns / bucket_width_ns(), kBuckets - 1);
    ++buckets[index];
    latencies.add(latency_ns);
    best_ns = std::min(best_ns, latency_ns);
    worst_ns = std::max(worst_ns, latency_ns);
    total_ns += latency_ns;
    ++transactions;
  }

  void merge(const ThroughputResults& other) {
    for (std::uint32_t i = 0; i < kBuckets; ++i) buckets[i] += other.buckets[i];
    latencies.merge(other.latencies);
    worst_ns = std::max(worst_ns, other.worst_ns);
    best_ns = std::min(best_ns, other.best_ns);
    total_ns += other.total_ns;
    transactions += other.transactions;
    long_transactions += other.long_transactions;
    ioctls += other.ioctls;
  }

  // binderThroughputTest's lines ("average:...ms worst:...ms best:...ms", then the 50/90/95/99 %
  // bucket midpoints in ms), followed by this tool's "precise latency percentiles (us, ...): P50 X
  // P90 X P99 X P99.9 X" and "ioctls per transaction: N".
  std::string report() const;
  // "precise latency percentiles (us, within 0.4 %): P50 X P90 X P99 X P99.9 X": from `latencies`,
  // which binder-ab --latency prefers to the bucket midpoints.
  std::string precise_percentiles_line() const;
};

}  // namespace cused::tools
