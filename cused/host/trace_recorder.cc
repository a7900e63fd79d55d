#include "cused/host/trace_recorder.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <utility>

#include "cused/host/ftrace_text.h"
#include "cused/host/usdt_probes.h"

namespace cused::host {
namespace {

using namespace std::chrono_literals;

constexpr auto kWritePeriod = 100ms;
constexpr auto kSettle = 50ms;

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
  stopping_ = false;
  started_ = std::chrono::steady_clock::now();
  {
    std::lock_guard write_guard(write_mutex_);
    summary_ = {};
    pending_.clear();
    names_.clear();
    trace_number_.fetch_add(1, std::memory_order_relaxed);
    // What a thread pushed after the last trace stopped belongs to no trace.
    for (auto& ring : rings_) {
      ring->drain([](const TraceRecord&) {});
      ring->take_dropped();
    }
  }
  std::fputs(trace_header().c_str(), file_);
  writer_ = std::thread([this] { run(); });
  core::trace::set_sink(this);
  return 0;
}

TraceRecorder::Summary TraceRecorder::stop() {
  std::thread writer;
  {
    std::lock_guard guard(mutex_);
    if (!file_ || stopping_) return {};
    core::trace::set_sink(nullptr);
    stopping_ = true;
    writer = std::move(writer_);
  }
  wake_.notify_all();
  writer.join();
  Summary summary;
  {
    std::lock_guard write_guard(write_mutex_);
    write_out(true);
    fmt::print(file_,
               "# cused: {} events written, {} dropped (rings of {} events per daemon thread)\n",
               summary_.written, summary_.dropped, ring_events_);
    summary = summary_;
  }
  std::lock_guard guard(mutex_);
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
  mine.ring->push({event, mine.tid, sched_getcpu()});
}

std::shared_ptr<TraceRing> TraceRecorder::ring_for_this_thread() {
  std::lock_guard guard(mutex_);
  for (auto& ring : rings_) {
    bool unowned = false;
    if (ring->owned.compare_exchange_strong(unowned, true, std::memory_order_acq_rel)) return ring;
  }
  return rings_.emplace_back(std::make_shared<TraceRing>(ring_events_));
}

void TraceRecorder::run() {
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

void TraceRecorder::write_out(bool all) {
  std::vector<std::shared_ptr<TraceRing>> rings;
  {
    std::lock_guard guard(mutex_);
    rings = rings_;
  }
  for (auto& ring : rings) {
    ring->drain([this](const TraceRecord& record) {
      if (record.event.time >= started_) pending_.push_back(record);
    });
    summary_.dropped += ring->take_dropped();
  }
  std::stable_sort(
      pending_.begin(), pending_.end(),
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

void TraceRecorder::write_line(const TraceRecord& record) {
  const core::TraceTask& task = record.event.task;
  const bool client = task.tid > 0;
  const pid_t tid = client ? task.tid : record.daemon_tid;
  const TaskNames::Task named = names_.of(tid);
  TraceLineTask line{named.comm, tid, client ? (task.tgid > 0 ? task.tgid : named.tgid) : getpid(),
                     record.cpu};
  std::fputs(trace_line(line, record.event).c_str(), file_);
  ++summary_.written;
}

}  // namespace cused::host
