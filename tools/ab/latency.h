// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --latency: a run's P50, P90, P99 or P99.9 latency in ms, read from what
// binder-throughput prints.
// cused's binder-throughput prints precise percentiles ("precise latency percentiles (us, within
// 0.4 %): P50 X P90 X P99 X P99.9 X"); Google's binderThroughputTest prints only its bucket line
// ("50%: X 90%: X 95%: X 99%: X", ms), each value the midpoint of one of 128 buckets, so the
// reading then carries the bucket width for the verdict (quantized_verdict.h). The bucket line
// has no P99.9: a P99.9 panel is only for programs that print the precise line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/ab/workload.h"

namespace cused::tools::ab {

enum class LatencyPercentile { p50, p90, p99, p999 };

// The precise line when the output has one, else the bucket line with its bucket width as the
// resolution; nullopt when it has neither. `command` is the workload as run (its -m counts).
std::optional<Reading> read_latency(const std::string& output, LatencyPercentile percentile,
                                    const std::vector<std::string>& command);

// binderThroughputTest's bucket width in ms, as it computes it: its range over 128 buckets in
// whole nanoseconds; the range is twice the training round's worst latency ("Max latency during
// training: Xms", -t), else the last "-m N" (microseconds) of `command`, else 50 ms.
double bucket_width_ms(const std::string& output, const std::vector<std::string>& command);

}  // namespace cused::tools::ab
