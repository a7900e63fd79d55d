// SPDX-License-Identifier: GPL-2.0-only
// The daemon's trace file (`cused --trace FILE`, docs/tracing.md): core's binder events
// (core/trace_events.h) go into per-thread rings (trace_ring.h). A collector thread empties the
// rings every 10 ms, and at once when one is a quarter full, into a backlog in memory; a writer
// thread writes the backlog every 100 ms into FILE in the ftrace text format (ftrace_text.h),
// merged in time order. Taking an event out of a ring is a copy, so the collector keeps up when
// the formatting does not (a loaded machine gives the writer little CPU); the formatting catches
// up from the backlog. Memory is bounded by the rings and the backlog's cap; what a full ring
// drops is counted per event name and written at the end.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/trace_events.h"
#include "cused/host/task_names.h"
#include "cused/host/task_priority.h"
#include "cused/host/trace_ring.h"

namespace cused::host {

class TraceRecorder final : public TaskStateSink {
 public:
  static constexpr std::size_t kRingEvents = 16384;  // per daemon thread: 88 bytes each, 1.4 MB
  // Events collected and not yet written, at most: 88 bytes each, 176 MB. Past it the collector
  // leaves the rings full, which then drop.
  static constexpr std::size_t kBacklogEvents = std::size_t{2} << 20;

  explicit TraceRecorder(std::size_t ring_events = kRingEvents);
  // Stops. Only a recorder no thread can still be recording into may go (see core::trace).
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // The daemon's recorder: never destroyed, since any daemon thread may be inside record().
  static TraceRecorder& daemon();

  // Creates (truncates) `path`, writes the header and makes this core's sink. 0, -EBUSY while a
  // trace is being written, or the -errno of the open.
  int start(const std::string& path);
  struct Summary {
    std::uint64_t written = 0;
    std::uint64_t dropped = 0;
    TraceEventCounts dropped_by_event{};  // per core::TraceEventType
    std::string path;                     // the file
  };
  // Ends the trace: core stops emitting, what the rings hold is written, then a last comment
  // line with the counts; the file is closed. A recorder that was not started returns zeros.
  Summary stop();
  bool running() const;

  void record(const core::TraceEvent& event) override;

 private:
  std::shared_ptr<TraceRing> ring_for_this_thread();
  std::vector<std::shared_ptr<TraceRing>> rings();
  void run_collector();
  void run_writer();
  // Moves what the rings hold into the backlog (up to its cap unless `all`), and their drops into
  // the summary.
  void collect(bool all);
  // Writes the backlog. Unless `all`, events of the last second wait for the next pass: a thread
  // may still be pushing an event stamped before the newest one collected.
  void write_out(bool all);
  void write_line(const TraceRecord& record);
  void write_end_lines();

  const std::uint64_t id_;  // tells this recorder's rings from another's in a thread's cache
  std::atomic<std::uint64_t> trace_number_{0};  // which start() the threads' name caches know
  const std::size_t ring_events_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable collect_wake_;
  std::atomic<bool> collect_now_{false};  // a ring asked for the collector
  bool stopping_ = false;
  std::FILE* file_ = nullptr;
  std::string path_;
  std::chrono::steady_clock::time_point started_;
  std::vector<std::shared_ptr<TraceRing>> rings_;
  std::thread collector_, writer_;
  // The collector's, under backlog_mutex_: what it took from the rings, and their drops.
  std::mutex backlog_mutex_;
  std::vector<TraceRecord> backlog_;
  TraceEventCounts dropped_{};
  // The writer's own, under write_mutex_ (the writer thread and stop() both write).
  std::mutex write_mutex_;
  std::vector<TraceRecord> pending_;  // in time order
  std::set<pid_t> written_tgids_;     // the thread groups of the lines written
  TaskNames names_;                   // its own lock: the recording threads note tasks in it
  Summary summary_;
};

}  // namespace cused::host
