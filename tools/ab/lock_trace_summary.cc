// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/lock_trace_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <tuple>

#include "core/lock_trace.h"
#include "cused/host/ftrace_line.h"

namespace cused::tools::ab {

std::string LockId::text() const {
  return policy.empty() || policy == "none" ? fmt::format("{} ({})", lock, variant)
                                            : fmt::format("{} ({}, {})", lock, variant, policy);
}

std::string priority_class(long long prio) {
  if (prio < 100) return fmt::format("FIFO {}", 99 - prio);  // or RR: the prio does not say
  return fmt::format("nice {}", prio - 120);
}

std::uint64_t Durations::percentile(double p) const {
  if (ns.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(ns.size())));
  return ns[std::clamp<std::size_t>(rank, 1, ns.size()) - 1];
}

std::uint64_t Durations::total() const {
  return std::accumulate(ns.begin(), ns.end(), std::uint64_t{0});
}

namespace {

using host::FtraceLine;

bool is_lock_event(const std::string& event) {
  return event == "cused_lock_contended" || event == "cused_lock_acquired" ||
         event == "cused_lock_released";
}

LockId lock_of(const FtraceLine& line) {
  return {line.field("lock").value_or("?"), line.field("variant").value_or(""),
          line.field("policy").value_or("")};
}

// The prio the event gives under `key`; nullopt without one, and for -1, the daemon's word for a
// task that is gone (or a holder whose hold began before the trace).
std::optional<long long> prio_of(const FtraceLine& line, const std::string& key) {
  auto prio = line.number(key);
  if (!prio || *prio < 0) return std::nullopt;
  return prio;
}

// The class of the line's own task: its prio under `key`, else its comm.
std::string thread_class(const FtraceLine& line, const std::string& key) {
  if (auto prio = prio_of(line, key)) return priority_class(*prio);
  return "comm " + line.comm;
}

// The allocator's locks, whose variant= is the device's alloc_lock= (the engine's proc, node and
// context locks say `mutex` on every device, which names no device): a kernel design's mmap,
// per-VMA and binder_alloc_mmap_lock too.
bool is_allocator_lock(const LockId& lock) {
  using core::TracedLock;
  for (TracedLock name : {TracedLock::alloc, TracedLock::alloc_install, TracedLock::alloc_mmap,
                          TracedLock::mmap, TracedLock::vma})
    if (lock.lock == core::to_string(name)) return true;
  return false;
}

// The group of `lock` and thread class `thread` in `groups`, made on first use; `name` is the
// member that holds the class (WaitGroup::waiter, HoldGroup::holder).
template <typename Group>
Group& group_of(std::map<std::pair<LockId, std::string>, Group>& groups, const LockId& lock,
                const std::string& thread, std::string Group::*name) {
  auto& group = groups[{lock, thread}];
  group.lock = lock;
  group.*name = thread;
  return group;
}

// Groups kept in maps while reading, then sorted into the summary's vectors.
struct Reader {
  LockTraceSummary summary;
  std::map<std::pair<LockId, std::string>, WaitGroup> waits;
  std::map<std::pair<LockId, std::string>, HoldGroup> holds;
  // A thread's contended event until its acquired one: the holder it waited behind.
  std::map<std::pair<int, LockId>, std::string> waiting_behind;

  void contended(const FtraceLine& line, const LockId& lock) {
    auto holder = prio_of(line, "holder_prio");
    waiting_behind[{line.tid, lock}] = holder ? priority_class(*holder) : "unknown";
  }

  void acquired(const FtraceLine& line, const LockId& lock) {
    auto wait = line.number("wait_ns");
    if (!wait) return;
    auto& group = group_of(waits, lock, thread_class(line, "prio"), &WaitGroup::waiter);
    group.waits.ns.push_back(static_cast<std::uint64_t>(*wait));
    std::string holder = "unknown";
    if (auto found = waiting_behind.find({line.tid, lock}); found != waiting_behind.end()) {
      holder = found->second;
      waiting_behind.erase(found);
    }
    auto& behind = group.behind[holder];
    ++behind.first;
    behind.second += static_cast<std::uint64_t>(*wait);
  }

  void released(const FtraceLine& line, const LockId& lock) {
    auto hold = line.number("hold_ns");
    if (!hold) return;
    auto& group = group_of(holds, lock, thread_class(line, "prio"), &HoldGroup::holder);
    group.holds.ns.push_back(static_cast<std::uint64_t>(*hold));
    if (auto nivcsw = line.number("nivcsw")) {
      ++group.with_nivcsw;
      group.preempted += *nivcsw > 0;
    }
  }

  void read(const FtraceLine& line, const std::string& exclude_variant) {
    if (!is_lock_event(line.event)) return;
    LockId lock = lock_of(line);
    if (!exclude_variant.empty() && is_allocator_lock(lock) && lock.variant == exclude_variant) {
      ++summary.excluded;
      return;
    }
    ++summary.lock_events;
    if (line.event == "cused_lock_contended")
      contended(line, lock);
    else if (line.event == "cused_lock_acquired")
      acquired(line, lock);
    else
      released(line, lock);
  }
};

}  // namespace

LockTraceSummary summarize_lock_trace(std::istream& trace, const std::string& exclude_variant) {
  Reader reader;
  reader.summary.excluded_variant = exclude_variant;
  std::optional<double> first, last;
  for (std::string text; std::getline(trace, text);) {
    auto line = host::parse_ftrace_line(text);
    if (!line) continue;
    ++reader.summary.events;
    // Each daemon thread's lines come as it flushes them: the file is not in time order.
    first = std::min(first.value_or(line->seconds), line->seconds);
    last = std::max(last.value_or(line->seconds), line->seconds);
    reader.read(*line, exclude_variant);
  }
  if (first) reader.summary.window_seconds = *last - *first;
  for (auto& [key, group] : reader.waits) {
    std::sort(group.waits.ns.begin(), group.waits.ns.end());
    reader.summary.waits.push_back(std::move(group));
  }
  for (auto& [key, group] : reader.holds) {
    std::sort(group.holds.ns.begin(), group.holds.ns.end());
    reader.summary.holds.push_back(std::move(group));
  }
  return reader.summary;
}

namespace {

nlohmann::json lock_json(const LockId& lock) {
  return {{"lock", lock.lock}, {"variant", lock.variant}, {"policy", lock.policy}};
}

LockId lock_from_json(const nlohmann::json& record) {
  return {record.at("lock").get<std::string>(), record.at("variant").get<std::string>(),
          record.at("policy").get<std::string>()};
}

// The figures a reader of the JSON wants without sorting, beside the values they come from.
nlohmann::json durations_json(const Durations& durations) {
  return {{"count", durations.count()},           {"p50_ns", durations.percentile(0.5)},
          {"p99_ns", durations.percentile(0.99)}, {"max_ns", durations.max()},
          {"total_ns", durations.total()},        {"ns", durations.ns}};
}

}  // namespace

nlohmann::json to_json(const LockTraceSummary& summary) {
  auto waits = nlohmann::json::array();
  for (const auto& group : summary.waits) {
    auto behind = nlohmann::json::object();
    for (const auto& [holder, figures] : group.behind)
      behind[holder] = {{"count", figures.first}, {"total_ns", figures.second}};
    waits.push_back({{"lock", lock_json(group.lock)},
                     {"waiter", group.waiter},
                     {"waits", durations_json(group.waits)},
                     {"behind", behind}});
  }
  auto holds = nlohmann::json::array();
  for (const auto& group : summary.holds)
    holds.push_back({{"lock", lock_json(group.lock)},
                     {"holder", group.holder},
                     {"holds", durations_json(group.holds)},
                     {"with_nivcsw", group.with_nivcsw},
                     {"preempted", group.preempted}});
  return {{"window_seconds", summary.window_seconds},
          {"events", summary.events},
          {"lock_events", summary.lock_events},
          {"excluded", summary.excluded},
          {"excluded_variant", summary.excluded_variant},
          {"waits", waits},
          {"holds", holds}};
}

LockTraceSummary lock_summary_from_json(const nlohmann::json& record) {
  LockTraceSummary summary;
  summary.window_seconds = record.at("window_seconds").get<double>();
  summary.events = record.at("events").get<std::size_t>();
  summary.lock_events = record.at("lock_events").get<std::size_t>();
  summary.excluded = record.at("excluded").get<std::size_t>();
  summary.excluded_variant = record.at("excluded_variant").get<std::string>();
  for (const auto& entry : record.at("waits")) {
    WaitGroup group{lock_from_json(entry.at("lock")),
                    entry.at("waiter").get<std::string>(),
                    {entry.at("waits").at("ns").get<std::vector<std::uint64_t>>()},
                    {}};
    for (const auto& [holder, figures] : entry.at("behind").items())
      group.behind[holder] = {figures.at("count").get<std::size_t>(),
                              figures.at("total_ns").get<std::uint64_t>()};
    summary.waits.push_back(std::move(group));
  }
  for (const auto& entry : record.at("holds"))
    summary.holds.push_back({lock_from_json(entry.at("lock")),
                             entry.at("holder").get<std::string>(),
                             {entry.at("holds").at("ns").get<std::vector<std::uint64_t>>()},
                             entry.at("with_nivcsw").get<std::size_t>(),
                             entry.at("preempted").get<std::size_t>()});
  return summary;
}

}  // namespace cused::tools::ab
