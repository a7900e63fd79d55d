// SPDX-License-Identifier: GPL-2.0-only
// The kernel's binder tracepoints (drivers/android/binder_trace.h, docs/tracing.md), as core
// emits them: at the points where binder.c and binder_alloc.c emit theirs, with the same fields,
// in TP_STRUCT__entry order. core only records values; the host implements TraceSink, gives each
// event its text (the TP_printk format) and writes it out, so core stays free of formatting and
// of OS calls.
//
// Off by default, and then an emit point costs one load of the sink and one predictable branch:
// the sink is one pointer for the whole daemon, as tracefs's event switches are for the kernel.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>

namespace cused::core {

// One value per event of binder_trace.h that cused emits. binder_lock/locked/unlock are defined
// there but have had no caller since the global binder lock went (4.14); binder_set_priority is
// the Android common kernel's; binder_unmap_kernel_* bracket a kernel mapping cused does not have.
enum class TraceEventType : std::uint8_t {
  kIoctl,                // cmd, arg
  kIoctlDone,            // ret
  kWriteDone,            // ret
  kReadDone,             // ret
  kWaitForWork,          // proc_work, transaction_stack, thread_todo
  kTxnLatencyFree,       // debug_id, from_proc, from_thread, to_proc, to_thread, code, flags
  kTransaction,          // debug_id, target_node, to_proc, to_thread, reply, code, flags
  kTransactionReceived,  // debug_id
  kNodeToRef,            // debug_id, node_debug_id, node_ptr, ref_debug_id, ref_desc
  kRefToNode,            // debug_id, ref_debug_id, ref_desc, node_debug_id, node_ptr
  kRefToRef,             // debug_id, node_debug_id, src ref id, src desc, dest ref id, dest desc
  kFdSend,               // debug_id, fd, offset
  kFdRecv,               // debug_id, fd, offset
  kAllocBuf,             // debug_id, data_size, offsets_size, extra_buffers_size
  kBufferRelease,        // the same
  kFailedBufferRelease,  // the same
  kUpdatePageRange,      // proc, allocate, offset, size
  kAllocLruStart,        // proc, page_index (and the same for the nine below)
  kAllocLruEnd,
  kFreeLruStart,
  kFreeLruEnd,
  kAllocPageStart,
  kAllocPageEnd,
  kUnmapUserStart,
  kUnmapUserEnd,
  kCommand,  // cmd
  kReturn,   // cmd
  // cused's own events (docs/tracing.md "cused's own events"): what binder_trace.h has no event
  // for and an A/B of the allocator's designs needs, named cused_* to sit beside the kernel's.
  kLockContended,  // lock, variant, policy, holder tid, holder prio (core/lock_trace.h)
  kLockAcquired,   // lock, variant, policy, wait ns, prio
  kLockReleased,   // lock, variant, policy, hold ns, prio, involuntary switches in the hold
  kPageInstall,    // proc, first page_index, pages, ns
  kPageReclaim,    // proc, page_index, ns
  kShrinkerPass,   // scanned, freed, skipped, ns
};
inline constexpr std::size_t kTraceEventTypes =
    static_cast<std::size_t>(TraceEventType::kShrinkerPass) + 1;

// The task an event belongs to: the client thread on whose behalf core runs (the kernel's
// `current`), not the daemon thread that runs it. 0: core runs for no client (a timer, the
// shrinker); the host then names its own thread.
struct TraceTask {
  pid_t tid = 0;
  pid_t tgid = 0;
};

struct TraceEvent {
  static constexpr std::size_t kMaxFields = 7;
  using Fields = std::array<std::uint64_t, kMaxFields>;
  TraceEventType type = TraceEventType::kIoctl;
  TraceTask task;
  std::chrono::steady_clock::time_point time;  // CLOCK_MONOTONIC, as ftrace's default clock
  // Signed values (ret, fd) are stored sign-extended; the formatter knows each field's type.
  Fields fields{};
};

class TraceSink {
 public:
  // Called on the emitting daemon thread, possibly with engine locks held: must not block on
  // anything the engine holds, and must not call back into core.
  virtual void record(const TraceEvent& event) = 0;
  // For the cused_lock_* events, on the same terms. The kernel's prio of thread `tid` (0..99 real
  // time, 100..139 SCHED_NORMAL/BATCH: 120 + nice, as the kernel's own binder events print a
  // priority); -1 when it cannot be read.
  virtual int task_prio(pid_t tid) {
    (void)tid;
    return -1;
  }
  // The calling daemon thread's involuntary context switches so far (a preempted lock holder).
  virtual std::uint64_t involuntary_switches() { return 0; }

 protected:
  ~TraceSink() = default;
};

namespace trace {

namespace detail {
extern std::atomic<TraceSink*> sink;
void record(TraceSink& sink, TraceEventType type, std::initializer_list<std::uint64_t> fields);
void record_at(TraceSink& sink, std::chrono::steady_clock::time_point time, TraceEventType type,
               std::initializer_list<std::uint64_t> fields);
}  // namespace detail

// The sink events go to; null switches tracing off. The sink must stay valid for as long as a
// thread may still be inside record() after it was replaced: the host never destroys its sink
// while the daemon runs.
void set_sink(TraceSink* sink);
// Makes `desired` the sink if `expected` is: for a sink that must not displace another (the
// host's USDT feed, which gives way to a trace being written). False if the sink was not
// `expected`.
bool replace_sink(TraceSink* expected, TraceSink* desired);
inline bool enabled() { return detail::sink.load(std::memory_order_acquire) != nullptr; }

// Records one event, if tracing is on, for the current task (TaskScope).
template <typename... Fields>
inline void emit(TraceEventType type, Fields... fields) {
  TraceSink* sink = detail::sink.load(std::memory_order_acquire);
  if (__builtin_expect(sink == nullptr, 1)) return;
  detail::record(*sink, type, {static_cast<std::uint64_t>(fields)...});
}

// emit(), stamped `time` rather than now: for an event whose instant was read before its fields
// were (a lock's acquisition and release, core/lock_trace.cc), so that a wait ends where the hold
// it led to begins.
template <typename... Fields>
inline void emit_at(std::chrono::steady_clock::time_point time, TraceEventType type,
                    Fields... fields) {
  TraceSink* sink = detail::sink.load(std::memory_order_acquire);
  if (__builtin_expect(sink == nullptr, 1)) return;
  detail::record_at(*sink, time, type, {static_cast<std::uint64_t>(fields)...});
}

// The start of a timed event: the clock is read only while tracing is on, so a duration costs
// nothing more than emit() when it is off. An unset start (tracing was off when the work began)
// makes emit_since() emit nothing rather than a duration it did not measure.
using TraceClock = std::chrono::steady_clock;
inline TraceClock::time_point start() {
  return enabled() ? TraceClock::now() : TraceClock::time_point{};
}

// Records `type` with `fields` followed by the nanoseconds since `since`, if tracing is on and
// was on at `since`.
template <typename... Fields>
inline void emit_since(TraceClock::time_point since, TraceEventType type, Fields... fields) {
  if (__builtin_expect(since == TraceClock::time_point{}, 1)) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(TraceClock::now() - since);
  emit(type, fields..., ns.count());
}

// The task of the events this daemon thread emits while the scope lives: the caller of the
// ioctl core serves, or the reader whose parked read it resumes. Nested scopes restore the outer
// task. Costs nothing beyond a branch while tracing is off.
class TaskScope {
 public:
  explicit TaskScope(TraceTask task);
  ~TaskScope();
  TaskScope(const TaskScope&) = delete;
  TaskScope& operator=(const TaskScope&) = delete;

 private:
  bool active_;
  TraceTask outer_;
};

TraceTask current_task();

// The sink's task_prio() and involuntary_switches(); -1 and 0 while tracing is off.
int task_prio(pid_t tid);
std::uint64_t involuntary_switches();

}  // namespace trace
}  // namespace cused::core
