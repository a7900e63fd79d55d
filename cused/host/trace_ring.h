// One daemon thread's trace events on their way to the trace file (docs/tracing.md): a bounded
// ring with one producer (the thread, in TraceSink::record, possibly under engine locks) and one
// consumer (the recorder's writer thread). Never blocks and never allocates: when the writer falls
// behind, new events are dropped and counted, as ftrace's ring buffer counts its overruns.
#pragma once

#include <sys/types.h>

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

class TraceRing {
 public:
  // `capacity`: events held before new ones are dropped.
  explicit TraceRing(std::size_t capacity) : slots_(capacity) {}

  // Producer. False (and counted) when the ring is full.
  bool push(const TraceRecord& record) {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) == slots_.size()) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    slots_[head % slots_.size()] = record;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer: hands every event held to `take`, oldest first, and frees their slots.
  template <typename Take>
  void drain(Take&& take) {
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    for (; tail != head; ++tail) take(slots_[tail % slots_.size()]);
    tail_.store(tail, std::memory_order_release);
  }

  // Consumer: the events dropped since the last call.
  std::uint64_t take_dropped() { return dropped_.exchange(0, std::memory_order_relaxed); }

  // Whether a live thread produces into this ring; a ring whose thread exited is given to the
  // next new thread rather than growing the set of rings.
  std::atomic<bool> owned{true};

 private:
  std::vector<TraceRecord> slots_;
  std::atomic<std::uint64_t> head_{0};  // next slot the producer writes
  std::atomic<std::uint64_t> tail_{0};  // next slot the consumer reads
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace cused::host
