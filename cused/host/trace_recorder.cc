// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/trace_recorder.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "core/trace_event_names.h"
#include "cused/host/ftrace_text.h"
#include "cused/host/usdt_probes.h"

namespace cused::host {
namespace {

using namespace std::chrono_literals;

constexpr auto kWritePeriod = 100ms;
constexpr auto kCollectPeriod = 10ms;
// A thread reads an event's time before it stores it; one descheduled in between (a loaded
// 2-CPU machine switches a thread out for tens of ms) stores it late. 50 ms was once too short
// (integration test trace, 20016.284680 after a later line, under tools/check at load 5).
constexpr auto kSettle = 1000ms;

std::atomic<std::uint64_t> next_recorder_id{1};

// The ring this thread pushes into, for the recorder `recorder_id`. Marked unowned when the
// thread exits, so that a new thread takes it over.
struct ThreadRing {
  std::uint64_t recorder_id = 0;
  std::shared_ptr<TraceRing> ring;
  pid_t tid = 0;
  // The client tasks this thread traced last in this trace, whose names are read already: the
  // names' lock is taken for a task not among them.
  std::uint64_t trace_number = 0;
  std::array<pid_t, 8> named{};
  std::size_t next_named = 0;
  bool named_already(pid_t task, std::uint64_t trace) {
    if (trace_number != trace) {
      trace_number = trace;
      named.fill(0);
    }
    if (std::find(named.begin(), named.end(), task) != named.end()) return true;
    named[next_named++ % named.size()] = task;
    return false;
  }
  ~ThreadRing() {
    if (ring) ring->owned.store(false, std::memory_order_release);
  }
};
thread_local ThreadRing this_thread_ring;

}  // namespace

TraceRecorder::TraceRecorder(std::size_t ring_events)
    : id_(next_recorder_id.fetch_add(1, std::memory_order_relaxed)), ring_events_(ring_events) {}

TraceRecorder::~TraceRecorder() { stop(); }

TraceRecorder& TraceRecorder::daemon() {
  static auto* recorder = new TraceRecorder();  // never destroyed: see the header
  return *recorder;
}

int TraceRecorder::start(const std::string& path) {
  std::lock_guard guard(mutex_);
  if (file_) return -EBUSY;
  std::FILE* file = std::fopen(path.c_str(), "we");
  if (!file) return -errno;
  file_ = file;
  path_ = path;
  stopping_ = false;
  started_ = std::chrono::steady_clock::now();
  {
    std::scoped_lock write_guard(write_mutex_, backlog_mutex_);
    summary_ = {};
    written_tgids_.clear();
    pending_.clear();
    backlog_.clear();
    dropped_ = {};
    names_.clear();
    trace_number_.fetch_add(1, std::memory_order_relaxed);
    // What a thread pushed after the last trace stopped belongs to no trace.
    TraceEventCounts none{};
    for (auto& ring : rings_) {
      ring->drain([](const TraceRecord&) {});
      ring->take_dropped(none);
    }
  }
  std::fputs(trace_header().c_str(), file_);
  collector_ = std::thread([this] { run_collector(); });
  writer_ = std::thread([this] { run_writer(); });
  core::trace::set_sink(this);
  return 0;
}

TraceRecorder::Summary TraceRecorder::stop() {
  std::thread collector, writer;
  {
    std::lock_guard guard(mutex_);
    if (!file_ || stopping_) return {};
    core::trace::set_sink(nullptr);
    stopping_ = true;
    collector = std::move(collector_);
    writer = std::move(writer_);
  }
  wake_.notify_all();
  collect_wake_.notify_all();
  collector.join();
  writer.join();
  Summary summary;
  {
    std::lock_guard write_guard(write_mutex_);
    collect(true);
    write_out(true);
    write_end_lines();
    summary = summary_;
  }
  std::lock_guard guard(mutex_);
  summary.path = path_;
  std::fclose(std::exchange(file_, nullptr));
  return summary;
}

bool TraceRecorder::running() const {
  std::lock_guard guard(mutex_);
  return file_ != nullptr;
}

void TraceRecorder::record(const core::TraceEvent& event) {
  fire_usdt_probe(event);
  ThreadRing& mine = this_thread_ring;
  if (mine.recorder_id != id_) {
    if (mine.ring) mine.ring->owned.store(false, std::memory_order_release);
    mine.ring = ring_for_this_thread();
    mine.recorder_id = id_;
    mine.tid = gettid();
  }
  const pid_t task = event.task.tid;
  if (task > 0 && !mine.named_already(task, trace_number_.load(std::memory_order_relaxed)))
    names_.note(task);
  if (mine.ring->push({event, mine.tid, sched_getcpu()}) == TraceRing::Push::kStoredCollectNow) {
    // Without mutex_: this thread may hold engine locks. A wake-up that comes just before the
    // collector waits is lost, and the collector comes at its next period instead.
    collect_now_.store(true, std::memory_order_relaxed);
    collect_wake_.notify_one();
  }
}

std::shared_ptr<TraceRing> TraceRecorder::ring_for_this_thread() {
  std::lock_guard guard(mutex_);
  for (auto& ring : rings_) {
    bool unowned = false;
    if (ring->owned.compare_exchange_strong(unowned, true, std::memory_order_acq_rel)) return ring;
  }
  return rings_.emplace_back(std::make_shared<TraceRing>(ring_events_));
}

std::vector<std::shared_ptr<TraceRing>> TraceRecorder::rings() {
  std::lock_guard guard(mutex_);
  return rings_;
}

void TraceRecorder::run_collector() {
  std::unique_lock guard(mutex_);
  while (!stopping_) {
    collect_wake_.wait_for(guard, kCollectPeriod, [this] {
      return stopping_ || collect_now_.load(std::memory_order_relaxed);
    });
    if (stopping_) break;
    collect_now_.store(false, std::memory_order_relaxed);
    guard.unlock();
    collect(false);
    guard.lock();
  }
}

void TraceRecorder::run_writer() {
  std::unique_lock guard(mutex_);
  while (!stopping_) {
    wake_.wait_for(guard, kWritePeriod, [this] { return stopping_; });
    if (stopping_) break;
    guard.unlock();
    {
      std::lock_guard write_guard(write_mutex_);
      write_out(false);
    }
    guard.lock();
  }
}

void TraceRecorder::collect(bool all) {
  const auto all_rings = rings();  // before backlog_mutex_: start() takes mutex_ first
  std::lock_guard guard(backlog_mutex_);
  for (auto& ring : all_rings) {
    const std::size_t room =
        backlog_.size() < kBacklogEvents ? kBacklogEvents - backlog_.size() : 0;
    ring->drain(
        [this](const TraceRecord& record) {
          if (record.event.time >= started_) backlog_.push_back(record);
        },
        all ? SIZE_MAX : room);
    ring->take_dropped(dropped_);
  }
}

void TraceRecorder::write_out(bool all) {
  std::vector<TraceRecord> batch;
  {
    std::lock_guard guard(backlog_mutex_);
    batch.swap(backlog_);
    summary_.dropped_by_event = dropped_;
  }
  // Each ring is in the order its thread stored, which is not quite time order (an event's time
  // is read before it is stored): sort what came, then merge it behind what waits.
  std::stable_sort(batch.begin(), batch.end(), [](const TraceRecord& a, const TraceRecord& b) {
    return a.event.time < b.event.time;
  });
  const auto middle = pending_.insert(pending_.end(), batch.begin(), batch.end());
  std::inplace_merge(
      pending_.begin(), middle, pending_.end(),
      [](const TraceRecord& a, const TraceRecord& b) { return a.event.time < b.event.time; });
  auto end = pending_.end();
  if (!all) {
    const auto settled = std::chrono::steady_clock::now() - kSettle;
    end = std::partition_point(pending_.begin(), pending_.end(),
                               [&](const TraceRecord& r) { return r.event.time < settled; });
  }
  for (auto it = pending_.begin(); it != end; ++it) write_line(*it);
  pending_.erase(pending_.begin(), end);
  std::fflush(file_);
}

// What ends the file, after the events: the drops per event name (when there were any), the
// program of each thread group written (for viewers that name processes), then the counts.
void TraceRecorder::write_end_lines() {
  summary_.dropped = 0;
  for (std::uint64_t n : summary_.dropped_by_event) summary_.dropped += n;
  if (summary_.dropped > 0)
    fmt::print(file_, "# cused: dropped per event: {}\n",
               core::trace_event_counts_text(summary_.dropped_by_event));
  for (const auto& [tgid, program] : names_.programs())
    if (written_tgids_.contains(tgid)) fmt::print(file_, "# cused: process {} {}\n", tgid, program);
  fmt::print(file_,
             "# cused: {} events written, {} dropped (rings of {} events per daemon thread)\n",
             summary_.written, summary_.dropped, ring_events_);
}

void TraceRecorder::write_line(const TraceRecord& record) {
  const core::TraceTask& task = record.event.task;
  const bool client = task.tid > 0;
  const pid_t tid = client ? task.tid : record.daemon_tid;
  const TaskNames::Task named = names_.of(tid);
  TraceLineTask line{named.comm, tid, client ? (task.tgid > 0 ? task.tgid : named.tgid) : getpid(),
                     record.cpu};
  std::fputs(trace_line(line, record.event).c_str(), file_);
  written_tgids_.insert(line.tgid);
  ++summary_.written;
}

}  // namespace cused::host
