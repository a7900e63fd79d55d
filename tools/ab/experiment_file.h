// SPDX-License-Identifier: GPL-2.0-only
// binder-ab run FILE: an experiment as one declarative JSON file (issue 46) — the two devices
// and their variants, the workload, the conditions each block runs under, the blocks, the time,
// the latency percentiles, tracing, and a sweep of parameters (one comparison per cell). Every
// key is documented in docs/ab.md ("Experiment files"); a key this parser does not know, or a
// value out of its range, is refused with a message naming the key.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/ab/latency.h"
#include "tools/ab/statistics.h"

namespace cused::tools::ab {

// The file's text as read: key order kept, so that a sweep's cells and the record's copy of the
// file come out in the order the user wrote them.
using ExperimentJson = nlohmann::ordered_json;

// A refused file: what() names the key ("workload.workers: 0 is out of range, 1 to 64").
class ExperimentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class WorkloadProgram {
  binder_throughput,       // cused's binder-throughput (tools/programs/binder_throughput.cc)
  binder_throughput_test,  // Google's binderThroughputTest, opening /dev/binder only
  binder_sendvec,          // libhwbinder's BM_sendVec_binder (tools/programs/binder_sendvec.cc)
  binder_messaging,        // hackbench's messaging over binder (tools/programs/binder_messaging.cc)
  command,                 // any command, "{dev}" in its words
};

struct ExperimentDevice {
  std::string name;     // the device node under the block's mount
  std::string variant;  // core/device_variant.h's SPEC, as the file gives it
};

struct ExperimentWorkload {
  WorkloadProgram program = WorkloadProgram::binder_throughput;
  std::vector<std::string> command;  // program "command": its words, "{dev}" and "{mount}"
  int workers = 2;
  int iterations = 1000;
  int payload = 0;         // bytes per transaction
  int latency_max_us = 0;  // binder-throughput's -m (0: the program's default)
  bool defer_complete = false;
  int groups = 1;                // binder-messaging
  int loops = 100;               // binder-messaging
  std::string benchmark_filter;  // binder-sendvec
  int nice = 0;
  int realtime_priority = 0;  // SCHED_FIFO priority of the measured workload; 0: off
  // What to read from a run; empty regex: the program's own metric.
  std::string metric, metric_name;
  std::optional<bool> lower_is_better, counts;
};

struct ExperimentMemoryCgroup {
  int mib = 256;
  bool zram = true;  // swap on a zram device of its own when the machine has no swap
};

struct ExperimentConditions {
  std::optional<int> daemon_nice;  // default: 0
  bool background_callers = false;
  bool background_traffic = false;
  int cpu_hogs = 0;
  bool shrinker_stress = false;
  std::optional<ExperimentMemoryCgroup> memcg;
  std::optional<int> install_latency_us;
};

struct ExperimentPublished {
  std::string experiment, result;
  Better direction = Better::higher;  // the side of 1 the published B/A lies on
};

struct Experiment {
  std::string name;   // the record's file name
  std::string title;  // the row's name in the tables (default: the comparison's name)
  std::string description;
  std::optional<ExperimentPublished> published;
  ExperimentDevice a, b;
  ExperimentWorkload workload;
  ExperimentConditions conditions;
  int blocks = 5;
  double time = 60;  // seconds per comparison (per cell of a sweep)
  std::vector<LatencyPercentile> latency;
  bool trace = false;
  double confidence = 0.95;
  double detect = 5;
};

// One comparison of a sweep (or the file's only one): its name ("mutex-handoff-2-steal") and
// settings: the file's name, then each sweep value's word ("2", "steal": a one-key variant's value)
// or each case's name.
struct ExperimentCell {
  std::string name;
  Experiment experiment;
};

// The file's experiment without its sweep. Throws ExperimentError naming the key.
Experiment parse_experiment(const ExperimentJson& file);

// Every cell of the file's sweep (the cross product of its parameters, in the file's order), or
// the one experiment when there is no sweep. Throws ExperimentError naming the key.
std::vector<ExperimentCell> expand_sweep(const ExperimentJson& file);

// `file` with `dotted_key` (a.b.c) set to `value`, parsed as JSON if it parses, else taken as a
// string (binder-ab run --set time=30, --set devices.b.variant=alloc_lock=mutex).
ExperimentJson with_setting(ExperimentJson file, const std::string& dotted_key,
                            const std::string& value);

// --quick: the file's "quick" overrides (if any) over time 2 and 3 blocks.
ExperimentJson quick_version(ExperimentJson file);

// Reads `path`: an experiment file, or a binder-ab run record (whose "experiment" it returns).
ExperimentJson read_experiment_file(const std::string& path);

// The variant of a side as the daemon gets it: the file's, then the conditions'
// install_latency_us, then the real-time condition's priority=android.
std::string effective_variant(const Experiment& experiment, const ExperimentDevice& device);

}  // namespace cused::tools::ab
