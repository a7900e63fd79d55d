// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --trace DIR: a short traced window per variant. One extra run of the workload on
// each side, outside the measured pairs (a running trace changes the lock under test: one try
// before each wait, clock reads; docs/tracing.md), with the daemon serving that side's device
// tracing into DIR/A.trace or DIR/B.trace (CUSED_CTL_TRACE, as `binderctl trace start/stop`),
// and the trace's lock summary (lock_trace_summary.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tools/ab/lock_trace_summary.h"
#include "tools/ab/workload.h"

namespace cused::tools::ab {

struct TracedRun {
  std::string side;    // "A" or "B"
  std::string path;    // the trace file
  int block = 1;       // the block it ran in, after that block's measured pairs
  double metric = 0;   // the traced run's main metric: not one of the measured runs
  double seconds = 0;  // how long the run took
  std::uint64_t written = 0, dropped = 0;  // what the daemon said the trace held
  // The drops per event name ("cused_lock_acquired"): a count read from the trace that misses
  // some of its events is partial, and the report says so and by how many.
  std::map<std::string, std::uint64_t> dropped_by_event{};
  std::string json_path{};  // the trace in the Trace Event Format (tools/programs/trace_event_json.h)
  LockTraceSummary summary;

  std::uint64_t dropped_of(const std::string& event) const {
    auto found = dropped_by_event.find(event);
    return found == dropped_by_event.end() ? 0 : found->second;
  }
};

// The value of `key` in a full variant ("alloc_lock=mutex,pages=eager,..."); empty if absent.
std::string variant_key(const std::string& variant, const std::string& key);

struct TraceWindow {
  std::string dir;                   // made if missing; the traces are DIR/A.trace and DIR/B.trace
  std::vector<std::string> command;  // with {dev}, as the measured runs run it
  std::regex metric;
  std::chrono::duration<double> run_limit{120};
};

// Throws std::runtime_error, naming `side`, when no cused serves the variant's device (so that
// --trace fails before the measured runs rather than after them).
void check_traceable(const char* side, const Variant& variant);

// One traced run of each side, B first if `b_first` (the block's own order), while the block's
// setup still runs. A side's summary leaves out lock events of the other side's alloc_lock when
// the two differ (one daemon serving both devices traces both). Throws std::runtime_error when
// the daemon cannot trace (no cused beside the device, a trace already running) or the run fails.
std::vector<TracedRun> traced_pair(const TraceWindow& window, const Variant& a, const Variant& b,
                                   bool b_first, int block);

}  // namespace cused::tools::ab
