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
  TraceEvent event;
  event.type = type;
  event.task = current;
  event.time = std::chrono::steady_clock::now();
  std::size_t i = 0;
  for (std::uint64_t value : fields) {
    if (i == event.fields.size()) break;
    event.fields[i++] = value;
  }
  sink.record(event);
}

}  // namespace detail

void set_sink(TraceSink* sink) { detail::sink.store(sink, std::memory_order_release); }

TaskScope::TaskScope(TraceTask task) : active_(enabled()) {
  if (!active_) return;
  outer_ = current;
  current = task;
}

TaskScope::~TaskScope() {
  if (active_) current = outer_;
}

TraceTask current_task() { return current; }

}  // namespace cused::core::trace
