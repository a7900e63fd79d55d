// SPDX-License-Identifier: GPL-2.0-only
// A cused trace (the ftrace text of `cused --trace`, `binderctl trace`, binder-ab --trace;
// docs/tracing.md) in the Trace Event Format: the JSON that Perfetto's UI, Catapult's trace
// viewer (chrome://tracing, trace2html) and speedscope read. What the text has and these viewers
// do not know how to draw, the lock waits above all, becomes their slices:
//
// * a process per thread group, named by its program (the trace's `# cused: process` end lines;
//   else the comm of its main thread), a thread track per thread, named `comm-tid`; the
//   daemon's own threads (the shrinker, timers) in the process `cused`;
// * a binder call as a slice on the caller ("binder transaction", from its binder_transaction
//   to the reply's binder_transaction_received) and one on the server ("binder reply", from the
//   call's receipt to its reply), joined by flow events from the caller to the server and back;
//   a one-way call as two short slices joined by one flow;
// * each cused_lock_acquired as a slice "wait LOCK" over its wait, each cused_lock_released as
//   "hold LOCK" over its hold, with the lock, variant, policy, prios, the holder that was waited
//   behind and the holder's preemptions in their args; cused_page_install, cused_page_reclaim
//   and cused_shrinker_pass as slices over their ns.
//
// The viewers need a thread's slices to nest. A derived slice (a call) that a lock's slice
// straddles is moved to nest; a wait or hold is never moved, and one that overlaps another only
// partly (or within the text's µs rounding) is drawn shortened to its enclosing slice, with its
// exact ns in its args and the shortening counted.
#pragma once

#include <cstddef>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>

namespace cused::tools {

struct TraceJsonCounts {
  std::size_t events = 0;      // event lines read
  std::size_t calls = 0;       // two-way calls with caller and server slices
  std::size_t one_way = 0;     // one-way calls with both ends
  std::size_t lock_waits = 0;  // wait slices
  std::size_t lock_holds = 0;  // hold slices
  std::size_t other = 0;       // page installs, reclaims, shrinker passes
  std::size_t flows = 0;       // flow arrows (each an "s" and an "f" event)
  std::size_t clipped = 0;     // lock or cused slices drawn shortened to nest
};

struct TraceJson {
  nlohmann::json document;  // {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}
  TraceJsonCounts counts;
};

// Reads a trace's text. Lines that are not events (the header, the end lines but for the
// process names and drops, which go to "otherData") are skipped.
TraceJson trace_event_json(std::istream& text);

// Where the JSON of the trace at `text_path` goes: the same path with ".json" added.
std::string trace_json_path(const std::string& text_path);

// Reads `text_path` and writes its JSON to `json_path`. Throws std::runtime_error when either
// file cannot be used.
TraceJsonCounts write_trace_event_json(const std::string& text_path, const std::string& json_path);

}  // namespace cused::tools
