// SPDX-License-Identifier: GPL-2.0-only
#include "core/trace_events.h"

namespace cused::core::trace {
namespace {

thread_local TraceTask current{};

}  // namespace

namespace detail {

std::atomic<TraceSink*> sink{nullptr};

// Out of line and cold: the inline emit() is all a disabled tracepoint costs.
[[gnu::cold]] void record(TraceSink& sink, TraceEventType type,
                          std::initializer_list<std::uint64_t> fields) {
  record_at(sink, std::chrono::steady_clock::now(), type, fields);
}

[[gnu::cold]] void record_at(TraceSink& sink, std::chrono::steady_clock::time_point time,
                             TraceEventType type, std::initializer_list<std::uint64_t> fields) {
  TraceEvent event;
  event.type = type;
  event.task = current;
  event.time = time;
  std::size_t i = 0;
  for (std::uint64_t value : fields) {
    if (i == event.fields.size()) break;
    event.fields[i++] = value;
  }
  sink.record(event);
}

}  // namespace detail

void set_sink(TraceSink* sink) { detail::sink.store(sink, std::memory_order_release); }

bool replace_sink(TraceSink* expected, TraceSink* desired) {
  return detail::sink.compare_exchange_strong(expected, desired, std::memory_order_acq_rel);
}

TaskScope::TaskScope(TraceTask task) : active_(enabled()) {
  if (!active_) return;
  outer_ = current;
  current = task;
}

TaskScope::~TaskScope() {
  if (active_) current = outer_;
}

TraceTask current_task() { return current; }

int task_prio(pid_t tid) {
  TraceSink* sink = detail::sink.load(std::memory_order_acquire);
  return sink != nullptr ? sink->task_prio(tid) : -1;
}

std::uint64_t involuntary_switches() {
  TraceSink* sink = detail::sink.load(std::memory_order_acquire);
  return sink != nullptr ? sink->involuntary_switches() : 0;
}

}  // namespace cused::core::trace
