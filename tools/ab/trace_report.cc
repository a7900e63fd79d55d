// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/trace_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace cused::tools::ab {

namespace {

double micros(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }

std::string run_line(const TracedRun& run) {
  std::string left_out;
  if (run.summary.excluded > 0)
    left_out = fmt::format(" ({} of variant={} left out: the other device's)", run.summary.excluded,
                           run.summary.excluded_variant);
  // A full ring drops what its thread emits next: the tables then miss events, not only lines.
  std::string dropped;
  if (run.dropped > 0) {
    dropped = fmt::format(
        "; the daemon's rings dropped {} events ({:.1f} %):", run.dropped,
        100.0 * static_cast<double>(run.dropped) / static_cast<double>(run.dropped + run.written));
    for (const auto& [event, n] : run.dropped_by_event) dropped += fmt::format(" {}={}", event, n);
  }
  std::string json;
  if (!run.json_path.empty()) json = fmt::format("\n   in a trace viewer: {}", run.json_path);
  return fmt::format(
      "{}: {}, block {}, metric {:.6g}, run {:.2f} s, traced {:.3f} s, {} events written ({} "
      "dropped), {} lock events{}{}{}\n",
      run.side, run.path, run.block, run.metric, run.seconds, run.summary.window_seconds,
      run.written, run.dropped, run.summary.lock_events, left_out, dropped, json);
}

// What a side's dropped lock events leave partial, under the tables: the daemon counts drops per
// event name, not per lock or thread, so every row of that kind may miss up to that many.
std::string partial_line(const TracedRun& run, const char* event, const char* what) {
  const std::uint64_t n = run.dropped_of(event);
  if (n == 0) return "";
  return fmt::format(
      "{}: partial: {} {} events were dropped (locks and threads unknown), so each of {}'s {} "
      "counts (marked ≥) misses up to {}, and its percentiles and totals are of the rest\n",
      run.side, n, event, run.side, what, n);
}

// A count the trace may lack some of: "≥ 882" then.
std::string count_cell(std::size_t count, std::uint64_t dropped) {
  return dropped == 0 ? fmt::format("{}", count) : fmt::format("≥ {}", count);
}

std::string behind_cell(const WaitGroup& group) {
  std::string cell;
  for (const auto& [holder, figures] : group.behind)
    cell += fmt::format("{}{}: {}, {:.3f} ms", cell.empty() ? "" : "; ", holder, figures.first,
                        static_cast<double>(figures.second) / 1e6);
  return cell;
}

std::string preempted_cell(const HoldGroup& group) {
  if (group.with_nivcsw == 0) return "not in the trace";
  return fmt::format(
      "{} of {} ({:.1f} %)", group.preempted, group.with_nivcsw,
      100.0 * static_cast<double>(group.preempted) / static_cast<double>(group.with_nivcsw));
}

}  // namespace

std::string trace_tables(const std::vector<TracedRun>& runs) {
  std::string out =
      "\nTraced window (--trace): one extra run per variant, not among the measured runs\n";
  for (const auto& run : runs) out += run_line(run);
  out +=
      "\n| variant | lock | waiter | waits | P50 µs | P99 µs | max µs | total ms | behind "
      "(holder: waits, ms) |\n|---|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& run : runs)
    for (const auto& group : run.summary.waits)
      out += fmt::format("| {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.3f} | {} |\n",
                         run.side, group.lock.text(), group.waiter,
                         count_cell(group.waits.count(), run.dropped_of("cused_lock_acquired")),
                         micros(group.waits.percentile(0.5)), micros(group.waits.percentile(0.99)),
                         micros(group.waits.max()), static_cast<double>(group.waits.total()) / 1e6,
                         behind_cell(group));
  for (const auto& run : runs) {
    out += partial_line(run, "cused_lock_acquired", "waits");
    out += partial_line(run, "cused_lock_contended", "'behind'");
  }
  out +=
      "\n| variant | lock | holder | holds | P50 µs | P99 µs | max µs | preempted holding "
      "(nivcsw > 0) |\n|---|---|---|---:|---:|---:|---:|---|\n";
  for (const auto& run : runs)
    for (const auto& group : run.summary.holds)
      out += fmt::format("| {} | {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {} |\n", run.side,
                         group.lock.text(), group.holder,
                         count_cell(group.holds.count(), run.dropped_of("cused_lock_released")),
                         micros(group.holds.percentile(0.5)), micros(group.holds.percentile(0.99)),
                         micros(group.holds.max()), preempted_cell(group));
  for (const auto& run : runs) out += partial_line(run, "cused_lock_released", "holds");
  return out;
}

nlohmann::json to_json(const std::vector<TracedRun>& runs) {
  auto out = nlohmann::json::array();
  for (const auto& run : runs)
    out.push_back({{"side", run.side},
                   {"path", run.path},
                   {"block", run.block},
                   {"metric", run.metric},
                   {"seconds", run.seconds},
                   {"written", run.written},
                   {"dropped", run.dropped},
                   {"dropped_by_event", run.dropped_by_event},
                   {"json_path", run.json_path},
                   {"summary", to_json(run.summary)}});
  return out;
}

std::vector<TracedRun> traced_runs_from_json(const nlohmann::json& record) {
  std::vector<TracedRun> runs;
  for (const auto& entry : record)
    runs.push_back({.side = entry.at("side").get<std::string>(),
                    .path = entry.at("path").get<std::string>(),
                    .block = entry.at("block").get<int>(),
                    .metric = entry.at("metric").get<double>(),
                    .seconds = entry.at("seconds").get<double>(),
                    .written = entry.at("written").get<std::uint64_t>(),
                    .dropped = entry.at("dropped").get<std::uint64_t>(),
                    // Records before per-event drops were kept have neither.
                    .dropped_by_event =
                        entry.value("dropped_by_event", std::map<std::string, std::uint64_t>{}),
                    .json_path = entry.value("json_path", std::string()),
                    .summary = lock_summary_from_json(entry.at("summary"))});
  return runs;
}

std::vector<std::pair<std::string, std::vector<std::uint64_t>>> waits_by_class(
    const LockTraceSummary& summary) {
  std::vector<std::pair<std::string, std::vector<std::uint64_t>>> out;
  for (const auto& group : summary.waits) {
    auto found = std::find_if(out.begin(), out.end(),
                              [&](const auto& entry) { return entry.first == group.waiter; });
    if (found == out.end()) found = out.insert(out.end(), {group.waiter, {}});
    found->second.insert(found->second.end(), group.waits.ns.begin(), group.waits.ns.end());
  }
  for (auto& [waiter, ns] : out) std::sort(ns.begin(), ns.end());
  return out;
}

}  // namespace cused::tools::ab
