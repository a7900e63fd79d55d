// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --trace's summary of one traced window: cused's lock events (cused_lock_contended,
// _acquired, _released; docs/tracing.md) as waits and holds per lock and per priority of the
// thread that waited or held, so that an A/B's difference can be followed to where its time
// goes (issue 32 point 5).
//
// The priority of a thread is the event's prio= (the kernel's task prio, as binder's own trace
// events print it) where the daemon emits it; a trace without it (or with -1: the task is gone)
// names the thread by its comm instead, which tells the workload's threads from the background's
// in a reproduction.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cused::tools::ab {

// Which lock: its name and the variant and policy the event gives it ("alloc", "mutex",
// "barging").
struct LockId {
  std::string lock, variant, policy;
  auto operator<=>(const LockId&) const = default;
  std::string text() const;  // "alloc (mutex, barging)"
};

// "nice -10", "nice 19", "FIFO 1" for a kernel prio (120 + nice; 99 - rt_priority).
std::string priority_class(long long prio);

// Count, percentiles and sum of a set of durations in ns (nearest rank: P99 is a value that was
// measured).
struct Durations {
  std::vector<std::uint64_t> ns;  // sorted
  std::size_t count() const { return ns.size(); }
  std::uint64_t percentile(double p) const;  // 0 when empty
  std::uint64_t max() const { return ns.empty() ? 0 : ns.back(); }
  std::uint64_t total() const;
};

// The waits of one lock by the threads of one priority class, and whom they waited behind.
struct WaitGroup {
  LockId lock;
  std::string waiter;  // priority_class(prio=), or "comm NAME" without it
  Durations waits;
  // Per holder class (holder_prio= of the wait's cused_lock_contended; "unknown" without it):
  // how many of the waits and how much of their time were spent behind it.
  std::map<std::string, std::pair<std::size_t, std::uint64_t>> behind;
};

// The holds of one lock by the threads of one priority class: those the trace emits (every
// contended one, every other of 10 µs or more, and every hold of a spinlock), and how many of
// them the holder was preempted in (nivcsw > 0: involuntary context switches of its thread
// across the hold).
struct HoldGroup {
  LockId lock;
  std::string holder;
  Durations holds;
  std::size_t with_nivcsw = 0;  // holds whose event has nivcsw= (0: the daemon does not say)
  std::size_t preempted = 0;    // of those, with nivcsw > 0
};

struct LockTraceSummary {
  double window_seconds = 0;  // from the earliest event line to the latest
  std::size_t events = 0;     // event lines read
  std::size_t lock_events = 0;
  // Lock events left out: they carry `exclude_variant` (another device of the same daemon).
  std::size_t excluded = 0;
  std::string excluded_variant;
  std::vector<WaitGroup> waits;  // ordered by lock, then waiter
  std::vector<HoldGroup> holds;
};

// Reads a trace. Events of the allocator's locks (alloc, alloc_install; a kernel design's
// alloc_mmap, mmap, vma) whose variant= is `exclude_variant` (non-empty) are left out and
// counted: binder-ab passes the other side's
// alloc_lock when A and B differ in it, since a daemon that serves both devices traces both into
// one file. The engine's locks (proc_outer, proc_inner, node, context) say variant=mutex on every
// device: theirs are kept, both devices'.
LockTraceSummary summarize_lock_trace(std::istream& trace, const std::string& exclude_variant = "");

nlohmann::json to_json(const LockTraceSummary& summary);
LockTraceSummary lock_summary_from_json(const nlohmann::json& record);

}  // namespace cused::tools::ab
