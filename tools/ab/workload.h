// SPDX-License-Identifier: GPL-2.0-only
// One binder-ab workload: a command line with a `{dev}` placeholder, run once per measurement
// against one variant's device, and the metric read from what it prints.
#pragma once

#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace cused::tools::ab {

// One side of the comparison: what the table calls it, the device node the workload opens, the
// SPEC its label claims (NAME:SPEC) and the variant the device really has (read from its cused,
// tools/ab/variant_check.h; empty where no cused serves it).
struct Variant {
  std::string label{};
  std::string device{};
  std::string spec{};
  std::string actual{};
};

// "A" or "B" on the command line: a path (a '/' before any ':') is used as is and labelled by
// itself; "NAME" or "NAME:SPEC" names a device under `mount_dir` and keeps the text as its label
// (SPEC may hold paths: alloc_lock=kernel:/src/linux+/src/my.patch). Throws
// std::invalid_argument for a SPEC that core/device_variant's parser refuses.
Variant resolve_variant(const std::string& text, const std::string& mount_dir);

// `words` with every "{dev}" replaced by the variant's device and "{label}" by its label.
std::vector<std::string> substitute(const std::vector<std::string>& words, const Variant& variant);

// binder-throughput's "iterations per sec: N".
inline constexpr const char* kDefaultMetric = R"(iterations per sec: ([0-9.eE+-]+))";

// A number read from a run's output and its resolution: the width of the buckets it is the
// midpoint of (binderThroughputTest's latency percentiles), 0 when it is as precise as printed.
struct Reading {
  double value = 0;
  double resolution = 0;
};

// The number in the metric's first capture group, from its last match in `output` (a
// binder-throughput training round prints a line before the real one); nullopt if none parses.
std::optional<double> extract_metric(const std::string& output, const std::regex& metric);

// A waitpid status in words: "exited with status 1", "killed by signal 9".
std::string describe_wait_status(int status);

struct CommandResult {
  bool timed_out = false;
  int status = -1;  // waitpid status
  std::string output;
  std::chrono::duration<double> elapsed{};

  bool succeeded() const;
  std::string describe_failure() const;
};

// Runs `argv` (argv[0] looked up in PATH) in its own process group with stdout and stderr
// captured (one stream, in order); at
// `limit` the whole group is killed. Throws std::system_error if it cannot start.
CommandResult run_command(const std::vector<std::string>& argv,
                          std::chrono::duration<double> limit);

}  // namespace cused::tools::ab
