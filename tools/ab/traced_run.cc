// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/traced_run.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <variant>

#include "core/trace_event_names.h"
#include "tools/ab/stop_signals.h"
#include "tools/programs/binderctl_control.h"
#include "tools/programs/trace_event_json.h"

namespace cused::tools::ab {

std::string variant_key(const std::string& variant, const std::string& key) {
  std::istringstream in(variant);
  for (std::string item; std::getline(in, item, ',');)
    if (item.rfind(key + "=", 0) == 0) return item.substr(key.size() + 1);
  return "";
}

namespace {

std::string control_dir(const Variant& variant) {
  return std::filesystem::path(variant.device).parent_path().string();
}

std::string no_daemon(const char* side, const Variant& variant) {
  return fmt::format("--trace: {} ({}): no cused's binder-control beside it", side, variant.device);
}

}  // namespace

void check_traceable(const char* side, const Variant& variant) {
  if (!binderctl::ControlFile(control_dir(variant)).ok())
    throw std::runtime_error(no_daemon(side, variant));
}

namespace {

// The trace of the daemon that serves `device` (its mount's binder-control), started for the
// object's life: stopped on every way out, so that a failed run leaves no trace running, a
// binder-ab stopped by a signal (Ctrl-C) included. Only one trace runs per daemon, so one left
// running would make the next `binderctl trace start` or binder-ab --trace fail with EBUSY.
class DaemonTrace {
 public:
  DaemonTrace(const char* side, const Variant& variant, const std::string& path)
      : control_(control_dir(variant)) {
    if (!control_.ok()) throw std::runtime_error(no_daemon(side, variant));
    check(control_.trace(path), fmt::format("start a trace into {}", path));
    // After the start: a signal before it must not stop a trace someone else started.
    on_stop_signal_.emplace([this] { (void)control_.trace(""); });
  }
  ~DaemonTrace() {
    if (!stopped_) (void)control_.trace("");
  }
  DaemonTrace(const DaemonTrace&) = delete;
  DaemonTrace& operator=(const DaemonTrace&) = delete;

  uapi::cused_trace stop() {
    on_stop_signal_.reset();
    stopped_ = true;
    return check(control_.trace(""), "stop the trace");
  }

 private:
  static uapi::cused_trace check(binderctl::Result<uapi::cused_trace> result,
                                 const std::string& what) {
    if (auto* failure = std::get_if<binderctl::Failure>(&result))
      throw std::runtime_error(fmt::format("--trace: cannot {}: {} ({})", what, failure->what,
                                           std::strerror(failure->err)));
    return std::get<uapi::cused_trace>(result);
  }

  binderctl::ControlFile control_;
  bool stopped_ = false;
  std::optional<StopCleanup> on_stop_signal_;
};

TracedRun traced_run(const TraceWindow& window, const char* side, const Variant& variant,
                     int block) {
  TracedRun run;
  run.side = side;
  run.path = (std::filesystem::absolute(window.dir) / fmt::format("{}.trace", side)).string();
  run.block = block;
  DaemonTrace trace(side, variant, run.path);
  auto argv = substitute(window.command, variant);
  auto result = run_command(argv, window.run_limit);
  auto held = trace.stop();
  if (!result.succeeded())
    throw std::runtime_error(fmt::format("--trace: {}'s traced run: {} {}\n{}", side, argv[0],
                                         result.describe_failure(), result.output));
  auto metric = extract_metric(result.output, window.metric);
  if (!metric)
    throw std::runtime_error(
        fmt::format("--trace: {}'s traced run printed no metric\n{}", side, result.output));
  run.metric = *metric;
  run.seconds = result.elapsed.count();
  run.written = held.written;
  run.dropped = held.dropped;
  for (std::size_t type = 0; type < core::kTraceEventTypes; ++type)
    if (held.dropped_by_event[type] > 0)
      run.dropped_by_event[std::string(core::kTraceEventNames[type])] = held.dropped_by_event[type];
  return run;
}

// Read after both sides' traced runs, so that reading one side's trace does not delay the
// other's run into another state of the background load.
void summarize(TracedRun& run, const Variant& variant, const Variant& other) {
  std::string own = variant_key(variant.actual, "alloc_lock");
  std::string others = variant_key(other.actual, "alloc_lock");
  std::ifstream in(run.path);
  if (!in) throw std::runtime_error("--trace: cannot read " + run.path);
  run.summary = summarize_lock_trace(in, others != own ? others : "");
  run.json_path = tools::trace_json_path(run.path);
  tools::write_trace_event_json(run.path, run.json_path);
}

}  // namespace

std::vector<TracedRun> traced_pair(const TraceWindow& window, const Variant& a, const Variant& b,
                                   bool b_first, int block) {
  std::filesystem::create_directories(window.dir);
  std::vector<TracedRun> runs(2);  // A, B
  if (b_first) runs[1] = traced_run(window, "B", b, block);
  runs[0] = traced_run(window, "A", a, block);
  if (!b_first) runs[1] = traced_run(window, "B", b, block);
  summarize(runs[0], a, b);
  summarize(runs[1], b, a);
  return runs;
}

}  // namespace cused::tools::ab
