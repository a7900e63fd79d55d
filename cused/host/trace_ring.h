// SPDX-License-Identifier: GPL-2.0-only
// One daemon thread's trace events on their way to the trace file (docs/tracing.md): a bounded
// ring with one producer (the thread, in TraceSink::record, possibly under engine locks) and one
// consumer (the recorder's collector thread). Never blocks and never allocates. A ring a quarter
// full asks for the collector (push()'s answer), so that it is emptied long before it fills; when
// the collector still falls behind, new events are dropped and counted per event type, as
// ftrace's ring buffer counts its overruns.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/trace_events.h"

namespace cused::host {

struct TraceRecord {
  core::TraceEvent event;
  pid_t daemon_tid = 0;  // the daemon thread that emitted it: the task of an event without one
  int cpu = 0;           // the CPU that thread ran on
};

// Events per type (core::TraceEventType's order).
using TraceEventCounts = std::array<std::uint64_t, core::kTraceEventTypes>;

class TraceRing {
 public:
  enum class Push {
    kStored,
    kStoredCollectNow,  // stored, and the ring has just become a quarter full
    kDropped,           // full: dropped and counted
  };

  // `capacity`: events held before new ones are dropped.
  explicit TraceRing(std::size_t capacity) : slots_(capacity) {}

  // Producer.
  Push push(const TraceRecord& record) {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    const std::uint64_t held = head - tail_.load(std::memory_order_acquire);
    if (held == slots_.size()) {
      dropped_[static_cast<std::size_t>(record.event.type)].fetch_add(1, std::memory_order_relaxed);
      return Push::kDropped;
    }
    slots_[head % slots_.size()] = record;
    head_.store(head + 1, std::memory_order_release);
    return held + 1 == collect_at() ? Push::kStoredCollectNow : Push::kStored;
  }

  // Consumer: hands at most `limit` of the events held to `take`, oldest first, and frees their
  // slots.
  template <typename Take>
  void drain(Take&& take, std::size_t limit = SIZE_MAX) {
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    for (; tail != head && limit > 0; ++tail, --limit) take(slots_[tail % slots_.size()]);
    tail_.store(tail, std::memory_order_release);
  }

  // Consumer: adds the events dropped since the last call to `counts`, per type; their sum.
  std::uint64_t take_dropped(TraceEventCounts& counts) {
    std::uint64_t sum = 0;
    for (std::size_t type = 0; type < counts.size(); ++type) {
      const std::uint64_t n = dropped_[type].exchange(0, std::memory_order_relaxed);
      counts[type] += n;
      sum += n;
    }
    return sum;
  }

  // Whether a live thread produces into this ring; a ring whose thread exited is given to the
  // next new thread rather than growing the set of rings.
  std::atomic<bool> owned{true};

 private:
  std::size_t collect_at() const { return slots_.size() / 4 > 0 ? slots_.size() / 4 : 1; }

  std::vector<TraceRecord> slots_;
  std::atomic<std::uint64_t> head_{0};  // next slot the producer writes
  std::atomic<std::uint64_t> tail_{0};  // next slot the consumer reads
  std::array<std::atomic<std::uint64_t>, core::kTraceEventTypes> dropped_{};
};

}  // namespace cused::host
