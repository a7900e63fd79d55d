// SPDX-License-Identifier: GPL-2.0-only
// The text of cused's trace file (cused/host/ftrace_text.h) held against what the kernel prints:
// each expected string below is what binder_trace.h's TP_printk makes of the same field values
// (printf semantics: %d of an int, %x of an unsigned, %zu/%zd of a size_t, %016llx of a u64),
// and what kernel/trace/trace_output.c puts around it with options/record-tgid.
#include "cused/host/ftrace_text.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "core/alloc/designs/registry.h"
#include "core/lock_trace.h"
#include "core/sync/lock_policy.h"
#include "uapi/binder.h"

namespace cused::host {
namespace {

using core::TraceEvent;
using core::TraceEventType;
using namespace std::chrono_literals;

TraceEvent event(TraceEventType type, std::vector<std::uint64_t> fields) {
  TraceEvent e;
  e.type = type;
  for (std::size_t i = 0; i < fields.size(); ++i) e.fields[i] = fields[i];
  return e;
}

std::uint64_t negative(int value) { return static_cast<std::uint64_t>(value); }

struct KernelLine {
  TraceEvent event;
  const char* name;
  const char* fields;
};

// The kernel's lines for the same values, event by event.
const std::vector<KernelLine>& kernel_lines() {
  static const std::vector<KernelLine> lines{
      {event(TraceEventType::kIoctl, {0xc0306201, 0x7ffd2c1e5a40}), "binder_ioctl",
       "cmd=0xc0306201 arg=0x7ffd2c1e5a40"},
      {event(TraceEventType::kIoctlDone, {negative(-11)}), "binder_ioctl_done", "ret=-11"},
      {event(TraceEventType::kWriteDone, {0}), "binder_write_done", "ret=0"},
      {event(TraceEventType::kReadDone, {negative(-4)}), "binder_read_done", "ret=-4"},
      {event(TraceEventType::kWaitForWork, {1, 0, 1}), "binder_wait_for_work",
       "proc_work=1 transaction_stack=0 thread_todo=1"},
      // The kernel hands code to "flags=" and flags to "code=": its text, not its field names.
      {event(TraceEventType::kTxnLatencyFree, {2041, 612, 618, 580, 589, 0x1, 0x10}),
       "binder_txn_latency_free", "transaction=2041 from 612:618 to 580:589 flags=0x1 code=0x10"},
      {event(TraceEventType::kTransaction, {2041, 2035, 580, 0, 0, 0x5f504e47, 0x10}),
       "binder_transaction",
       "transaction=2041 dest_node=2035 dest_proc=580 dest_thread=0 reply=0 flags=0x10 "
       "code=0x5f504e47"},
      {event(TraceEventType::kTransaction, {2042, 0, 612, 618, 1, 0, 0}), "binder_transaction",
       "transaction=2042 dest_node=0 dest_proc=612 dest_thread=618 reply=1 flags=0x0 code=0x0"},
      {event(TraceEventType::kTransactionReceived, {2041}), "binder_transaction_received",
       "transaction=2041"},
      {event(TraceEventType::kNodeToRef, {2050, 2047, 0x7b5c40a0e0, 2051, 3}),
       "binder_transaction_node_to_ref",
       "transaction=2050 node=2047 src_ptr=0x0000007b5c40a0e0 ==> dest_ref=2051 dest_desc=3"},
      {event(TraceEventType::kRefToNode, {2052, 2051, 3, 2047, 0x7b5c40a0e0}),
       "binder_transaction_ref_to_node",
       "transaction=2052 node=2047 src_ref=2051 src_desc=3 ==> dest_ptr=0x0000007b5c40a0e0"},
      {event(TraceEventType::kRefToRef, {2053, 2047, 2051, 3, 2054, 1}),
       "binder_transaction_ref_to_ref",
       "transaction=2053 node=2047 src_ref=2051 src_desc=3 ==> dest_ref=2054 dest_desc=1"},
      {event(TraceEventType::kFdSend, {2055, 7, 24}), "binder_transaction_fd_send",
       "transaction=2055 src_fd=7 offset=24"},
      {event(TraceEventType::kFdRecv, {2055, 12, 24}), "binder_transaction_fd_recv",
       "transaction=2055 dest_fd=12 offset=24"},
      {event(TraceEventType::kAllocBuf, {2041, 100, 8, 0}), "binder_transaction_alloc_buf",
       "transaction=2041 data_size=100 offsets_size=8 extra_buffers_size=0"},
      {event(TraceEventType::kBufferRelease, {2041, 100, 8, 0}),
       "binder_transaction_buffer_release",
       "transaction=2041 data_size=100 offsets_size=8 extra_buffers_size=0"},
      {event(TraceEventType::kFailedBufferRelease, {2043, 4096, 0, 64}),
       "binder_transaction_failed_buffer_release",
       "transaction=2043 data_size=4096 offsets_size=0 extra_buffers_size=64"},
      {event(TraceEventType::kUpdatePageRange, {580, 1, 8192, 4096}), "binder_update_page_range",
       "proc=580 allocate=1 offset=8192 size=4096"},
      {event(TraceEventType::kCommand, {BC_TRANSACTION}), "binder_command",
       "cmd=0x40406300 BC_TRANSACTION"},
      {event(TraceEventType::kCommand, {BC_FREE_BUFFER}), "binder_command",
       "cmd=0x40086303 BC_FREE_BUFFER"},
      {event(TraceEventType::kCommand, {0x40046380}), "binder_command", "cmd=0x40046380 unknown"},
      {event(TraceEventType::kReturn, {BR_TRANSACTION_COMPLETE}), "binder_return",
       "cmd=0x7206 BR_TRANSACTION_COMPLETE"},
      {event(TraceEventType::kReturn, {BR_REPLY}), "binder_return", "cmd=0x80407203 BR_REPLY"},
      {event(TraceEventType::kReturn, {BR_NOOP}), "binder_return", "cmd=0x720c BR_NOOP"},
  };
  return lines;
}

// binder_lru_page_class: one text for ten events.
const std::vector<KernelLine>& kernel_page_lines() {
  static const std::vector<KernelLine> lines = [] {
    const std::pair<TraceEventType, const char*> events[] = {
        {TraceEventType::kAllocLruStart, "binder_alloc_lru_start"},
        {TraceEventType::kAllocLruEnd, "binder_alloc_lru_end"},
        {TraceEventType::kFreeLruStart, "binder_free_lru_start"},
        {TraceEventType::kFreeLruEnd, "binder_free_lru_end"},
        {TraceEventType::kAllocPageStart, "binder_alloc_page_start"},
        {TraceEventType::kAllocPageEnd, "binder_alloc_page_end"},
        {TraceEventType::kUnmapUserStart, "binder_unmap_user_start"},
        {TraceEventType::kUnmapUserEnd, "binder_unmap_user_end"},
    };
    std::vector<KernelLine> out;
    for (auto [type, name] : events)
      out.push_back({event(type, {580, 17}), name, "proc=580 page_index=17"});
    return out;
  }();
  return lines;
}

// cused's own events: the text docs/tracing.md's "cused's own events" gives for the same values.
const std::vector<KernelLine>& cused_lines() {
  using core::TracedLock;
  // A design's events carry its registered trace id (core/alloc/designs/registry.cc).
  auto lock = [](TracedLock name, std::string_view design, std::uint64_t policy) {
    return std::vector<std::uint64_t>{static_cast<std::uint64_t>(name),
                                      core::alloc::find_design(design)->trace_id, policy};
  };
  // Signed fields (a prio of -1) are stored sign-extended, as the sink stores them.
  auto with = [](std::vector<std::uint64_t> fields, std::initializer_list<std::int64_t> more) {
    for (std::int64_t value : more) fields.push_back(static_cast<std::uint64_t>(value));
    return fields;
  };
  const auto steal = static_cast<std::uint64_t>(sync::LockPolicy::kStealWindow);
  const auto barging = static_cast<std::uint64_t>(sync::LockPolicy::kBarging);
  const auto handoff = static_cast<std::uint64_t>(sync::LockPolicy::kHandoff);
  const auto mutex = lock(TracedLock::alloc, "mutex", steal);
  const auto spin = lock(TracedLock::alloc, "spin", core::kNoLockPolicy);
  const auto install = lock(TracedLock::alloc_install, "spin-install", barging);
  const auto inner = lock(TracedLock::proc_inner, "mutex", handoff);
  static const std::vector<KernelLine> lines{
      {event(TraceEventType::kLockContended, with(mutex, {4242, 139})), "cused_lock_contended",
       "lock=alloc variant=mutex policy=steal-window holder=4242 holder_prio=139"},
      {event(TraceEventType::kLockAcquired, with(mutex, {48213, 120})), "cused_lock_acquired",
       "lock=alloc variant=mutex policy=steal-window wait_ns=48213 prio=120"},
      {event(TraceEventType::kLockReleased, with(spin, {1210, 89, 2})), "cused_lock_released",
       "lock=alloc variant=spin policy=none hold_ns=1210 prio=89 nivcsw=2"},
      {event(TraceEventType::kLockAcquired, with(install, {5, 100})), "cused_lock_acquired",
       "lock=alloc_install variant=spin-install policy=barging wait_ns=5 prio=100"},
      {event(TraceEventType::kLockContended, with(inner, {0, -1})), "cused_lock_contended",
       "lock=proc_inner variant=mutex policy=handoff holder=0 holder_prio=-1"},
      {event(TraceEventType::kPageInstall, {580, 17, 3, 21480}), "cused_page_install",
       "proc=580 page_index=17 pages=3 ns=21480"},
      {event(TraceEventType::kPageReclaim, {580, 17, 9120}), "cused_page_reclaim",
       "proc=580 page_index=17 ns=9120"},
      {event(TraceEventType::kShrinkerPass, {12, 9, 3, 310442}), "cused_shrinker_pass",
       "scanned=12 freed=9 skipped=3 ns=310442"},
  };
  return lines;
}

// S3.1 / S3.2 / S4.1 (the commands, returns and transactions these events follow): every event
// cused emits prints the kernel's name and text for the same values.
TEST(FtraceText, EveryEventPrintsTheKernelsText_S3_1_S3_2) {
  std::vector<bool> seen(core::kTraceEventTypes);
  std::vector<KernelLine> lines = kernel_lines();
  lines.insert(lines.end(), kernel_page_lines().begin(), kernel_page_lines().end());
  lines.insert(lines.end(), cused_lines().begin(), cused_lines().end());
  for (const KernelLine& line : lines) {
    EXPECT_EQ(trace_event_name(line.event.type), line.name);
    EXPECT_EQ(trace_event_fields(line.event), line.fields) << line.name;
    seen[static_cast<std::size_t>(line.event.type)] = true;
  }
  for (std::size_t type = 0; type < seen.size(); ++type)
    EXPECT_TRUE(seen[type]) << trace_event_name(static_cast<TraceEventType>(type))
                            << " has no line to be held against";
}

TEST(FtraceText, LineIsTheKernelsContextWithRecordTgid) {
  TraceEvent e = event(TraceEventType::kTransactionReceived, {2041});
  e.time = std::chrono::steady_clock::time_point(5123456789us);
  EXPECT_EQ(trace_line({"binder-throughp", 4321, 4320, 1}, e),
            " binder-throughp-4321    (   4320) [001] ....  5123.456789: "
            "binder_transaction_received: transaction=2041\n");
  // A task whose thread group the kernel did not record; a long comm is not cut.
  e.time = std::chrono::steady_clock::time_point(123456789012us);
  EXPECT_EQ(trace_line({"cused", 77, 0, 12}, e),
            "           cused-77      (-------) [012] .... 123456.789012: "
            "binder_transaction_received: transaction=2041\n");
}

// What Perfetto's systrace importer matches on each line (its tokenizer's expression), so that
// trace_processor and ui.perfetto.dev read the file.
TEST(FtraceText, LinesAndHeaderAreWhatPerfettoReads) {
  const std::regex perfetto(
      R"(-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*[a-zA-Z0-9.]{0,4}\s+(\d+\.\d+):\s+(\S+):)");
  TraceEvent e = event(TraceEventType::kTransaction, {2041, 2035, 580, 0, 0, 1, 0});
  e.time = std::chrono::steady_clock::time_point(42s);
  std::smatch match;
  std::string line = trace_line({"a b-c", 4321, 0, 0}, e);
  ASSERT_TRUE(std::regex_search(line, match, perfetto)) << line;
  EXPECT_EQ(match.prefix().str(), "           a b-c");
  EXPECT_EQ(match[1].str(), "4321");
  EXPECT_EQ(match[2].str(), "-------");
  EXPECT_EQ(match[4].str(), "42.000000");
  EXPECT_EQ(match[5].str(), "binder_transaction");
  // Perfetto takes a file for a systrace when it starts with "# tracer", and skips '#' lines.
  std::string header = trace_header();
  EXPECT_EQ(header.rfind("# tracer: nop\n", 0), 0u);
  std::size_t start = 0;
  for (std::size_t end; (end = header.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_EQ(header[start], '#') << header.substr(start, end - start);
}

}  // namespace
}  // namespace cused::host
