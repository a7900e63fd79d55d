// SPDX-License-Identifier: GPL-2.0-only
// cused's trace text held against lines the kernel printed (issue 32 point 4): each line of
// kernel_binder_events.txt is copied as it is from tracefs's `trace` file in the tests/vm guest
// (Debian's 6.12 kernel, `tests/diff/record-kernel-traces --events`, the raw lines it leaves in
// build/tests/diff/raw-events), one per event cused emits; the test gives cused's formatter the
// values the line shows and expects the line's text after its timestamp, character for character.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cused/host/ftrace_line.h"
#include "cused/host/ftrace_text.h"

namespace cused::host {
namespace {

using core::TraceEvent;
using core::TraceEventType;

TraceEvent event(TraceEventType type, std::vector<std::uint64_t> fields) {
  TraceEvent e;
  e.type = type;
  for (std::size_t i = 0; i < fields.size(); ++i) e.fields[i] = fields[i];
  return e;
}

// The data file's event lines, in order, each as the trace reader (ftrace_line.h) reads it back
// from its timestamp on: "binder_ioctl: cmd=0x40046207 arg=0x7fd7a1562cd0". A line it cannot
// read is kept whole, so that it fails the comparison.
std::vector<std::string> kernel_printed() {
  const char* path = std::getenv("KERNEL_BINDER_EVENTS");
  std::ifstream in(path ? path : "");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto read = parse_ftrace_line(line);
    lines.push_back(read ? read->event + ": " + read->text : line);
  }
  return lines;
}

// The values each kernel line shows, in the file's order and core/trace_events.h's field order.
const std::vector<TraceEvent>& events_of_the_kernel_lines() {
  auto negative = [](int value) { return static_cast<std::uint64_t>(value); };
  static const std::vector<TraceEvent> events{
      event(TraceEventType::kIoctl, {0x40046207, 0x7fd7a1562cd0}),
      event(TraceEventType::kIoctlDone, {negative(-11)}),
      event(TraceEventType::kCommand, {0x40406300}),
      event(TraceEventType::kWriteDone, {0}),
      event(TraceEventType::kWaitForWork, {1, 0, 0}),
      event(TraceEventType::kReturn, {0x80407202}),
      event(TraceEventType::kReadDone, {negative(-4)}),
      // debug_id, target_node, to_proc, to_thread, reply, code, flags
      event(TraceEventType::kTransaction, {9, 3, 167, 0, 0, 0x1, 0x10}),
      event(TraceEventType::kTransaction, {16, 0, 162, 165, 1, 0x3, 0}),
      event(TraceEventType::kAllocBuf, {48, 32, 8, 0}),
      event(TraceEventType::kNodeToRef, {48, 49, 0x1000, 50, 1}),
      event(TraceEventType::kRefToNode, {51, 50, 1, 49, 0x1000}),
      event(TraceEventType::kRefToRef, {664, 660, 661, 2, 665, 1}),
      event(TraceEventType::kFdSend, {51, 14, 16}),
      event(TraceEventType::kFdRecv, {206, 16, 8}),
      event(TraceEventType::kTransactionReceived, {48}),
      event(TraceEventType::kBufferRelease, {194, 32, 8, 0}),
      event(TraceEventType::kFailedBufferRelease, {204, 64, 16, 0}),
      // debug_id, from_proc, from_thread, to_proc, to_thread, code, flags: the kernel prints
      // code after "flags=" and flags after "code=" (docs/tracing.md), code 2, flags 0x10 here.
      event(TraceEventType::kTxnLatencyFree, {134, 347, 348, 332, 0, 0x2, 0x10}),
      event(TraceEventType::kUpdatePageRange, {242, 1, 0, 4096}),
      event(TraceEventType::kAllocLruStart, {422, 0}),
      event(TraceEventType::kAllocLruEnd, {422, 0}),
      event(TraceEventType::kFreeLruStart, {242, 0}),
      event(TraceEventType::kFreeLruEnd, {242, 0}),
      event(TraceEventType::kAllocPageStart, {242, 0}),
      event(TraceEventType::kAllocPageEnd, {242, 0}),
  };
  return events;
}

TEST(FtraceKernelLines, EachEventPrintsTheLineTheKernelPrinted) {
  auto kernel = kernel_printed();
  const auto& events = events_of_the_kernel_lines();
  ASSERT_EQ(kernel.size(), events.size()) << "KERNEL_BINDER_EVENTS: one line per event below";
  for (std::size_t i = 0; i < events.size(); ++i)
    EXPECT_EQ(std::string(trace_event_name(events[i].type)) + ": " + trace_event_fields(events[i]),
              kernel[i]);
}

// Every binder_* event cused emits has its kernel line here, but the shrinker's
// binder_unmap_user_*: the kernel's shrinker runs on memory pressure only, which no script of
// the corpus can cause (docs/reliability.md: kShrink is not run), so the guest printed none.
TEST(FtraceKernelLines, EveryBinderEventCusedEmitsHasAKernelLine) {
  std::map<TraceEventType, bool> held;
  for (const TraceEvent& e : events_of_the_kernel_lines()) held[e.type] = true;
  for (std::size_t i = 0; i < core::kTraceEventTypes; ++i) {
    auto type = static_cast<TraceEventType>(i);
    std::string name(trace_event_name(type));
    if (name.rfind("cused_", 0) == 0) continue;  // cused's own: the kernel has no such event
    bool unprintable =
        type == TraceEventType::kUnmapUserStart || type == TraceEventType::kUnmapUserEnd;
    EXPECT_EQ(held[type], !unprintable) << name;
  }
}

}  // namespace
}  // namespace cused::host
