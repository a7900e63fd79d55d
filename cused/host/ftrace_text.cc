// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/ftrace_text.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <iterator>

#include "core/alloc/designs/registry.h"
#include "core/lock_trace.h"
#include "core/stats.h"
#include "core/sync/lock_policy.h"

namespace cused::host {
namespace {

using core::TraceEvent;
using core::TraceEventType;

// The field types of TP_STRUCT__entry, as the format prints them: %d of an int, %x of an
// unsigned int, %zu/%zd of a size_t, %llx of a u64.
int as_int(std::uint64_t field) { return static_cast<int>(static_cast<std::uint32_t>(field)); }
unsigned as_uint(std::uint64_t field) { return static_cast<std::uint32_t>(field); }
// %zd of a size_t: the kernel prints it signed.
long as_ssize(std::uint64_t field) { return static_cast<long>(field); }

// binder_command / binder_return: the code, then its name by _IOC_NR, "unknown" past the table.
std::string command_text(std::uint32_t cmd, std::string_view name) {
  return fmt::format("cmd=0x{:x} {}", cmd, name.empty() ? "unknown" : name);
}

std::string buffer_text(const TraceEvent::Fields& f) {
  return fmt::format("transaction={} data_size={} offsets_size={} extra_buffers_size={}",
                     as_int(f[0]), as_ssize(f[1]), as_ssize(f[2]), as_ssize(f[3]));
}

std::string fd_text(const TraceEvent::Fields& f, std::string_view side) {
  return fmt::format("transaction={} {}_fd={} offset={}", as_int(f[0]), side, as_int(f[1]), f[2]);
}

// cused_lock_*: "lock=alloc variant=mutex policy=barging", then the duration if the event has one.
// lock= variant= policy=, then the event's own: the holder and its prio (contended), the wait
// and the waiter's prio (acquired), the hold, the holder's prio and its involuntary switches in
// the hold (released).
std::string lock_text(const TraceEvent& event) {
  const TraceEvent::Fields& f = event.fields;
  const core::alloc::Design* design = core::alloc::find_design_by_trace_id(f[1]);
  const std::string_view policy =
      f[2] == core::kNoLockPolicy ? "none" : sync::to_string(static_cast<sync::LockPolicy>(f[2]));
  std::string text = fmt::format("lock={} variant={} policy={}",
                                 core::to_string(static_cast<core::TracedLock>(f[0])),
                                 design ? design->name : "?", policy);
  auto out = std::back_inserter(text);
  switch (event.type) {
    case TraceEventType::kLockContended:
      fmt::format_to(out, " holder={} holder_prio={}", as_int(f[3]), as_int(f[4]));
      break;
    case TraceEventType::kLockAcquired:
      fmt::format_to(out, " wait_ns={} prio={}", f[3], as_int(f[4]));
      break;
    default:
      fmt::format_to(out, " hold_ns={} prio={} nivcsw={}", f[3], as_int(f[4]), f[5]);
      break;
  }
  return text;
}

}  // namespace

std::string trace_event_fields(const TraceEvent& event) {
  const TraceEvent::Fields& f = event.fields;
  switch (event.type) {
    case TraceEventType::kIoctl:
      return fmt::format("cmd=0x{:x} arg=0x{:x}", as_uint(f[0]), f[1]);
    case TraceEventType::kIoctlDone:
    case TraceEventType::kWriteDone:
    case TraceEventType::kReadDone:
      return fmt::format("ret={}", as_int(f[0]));
    case TraceEventType::kWaitForWork:
      return fmt::format("proc_work={} transaction_stack={} thread_todo={}", as_int(f[0]),
                         as_int(f[1]), as_int(f[2]));
    case TraceEventType::kTxnLatencyFree:
      // The kernel passes code before flags to "flags=0x%x code=0x%x"; printed as it prints.
      return fmt::format("transaction={} from {}:{} to {}:{} flags=0x{:x} code=0x{:x}",
                         as_int(f[0]), as_int(f[1]), as_int(f[2]), as_int(f[3]), as_int(f[4]),
                         as_uint(f[5]), as_uint(f[6]));
    case TraceEventType::kTransaction:
      return fmt::format(
          "transaction={} dest_node={} dest_proc={} dest_thread={} reply={} flags=0x{:x} "
          "code=0x{:x}",
          as_int(f[0]), as_int(f[1]), as_int(f[2]), as_int(f[3]), as_int(f[4]), as_uint(f[6]),
          as_uint(f[5]));
    case TraceEventType::kTransactionReceived:
      return fmt::format("transaction={}", as_int(f[0]));
    case TraceEventType::kNodeToRef:
      return fmt::format("transaction={} node={} src_ptr=0x{:016x} ==> dest_ref={} dest_desc={}",
                         as_int(f[0]), as_int(f[1]), f[2], as_int(f[3]), as_int(f[4]));
    case TraceEventType::kRefToNode:
      return fmt::format("transaction={} node={} src_ref={} src_desc={} ==> dest_ptr=0x{:016x}",
                         as_int(f[0]), as_int(f[3]), as_int(f[1]), as_int(f[2]), f[4]);
    case TraceEventType::kRefToRef:
      return fmt::format(
          "transaction={} node={} src_ref={} src_desc={} ==> dest_ref={} dest_desc={}",
          as_int(f[0]), as_int(f[1]), as_int(f[2]), as_int(f[3]), as_int(f[4]), as_int(f[5]));
    case TraceEventType::kFdSend:
      return fd_text(f, "src");
    case TraceEventType::kFdRecv:
      return fd_text(f, "dest");
    case TraceEventType::kAllocBuf:
    case TraceEventType::kBufferRelease:
    case TraceEventType::kFailedBufferRelease:
      return buffer_text(f);
    case TraceEventType::kUpdatePageRange:
      return fmt::format("proc={} allocate={} offset={} size={}", as_int(f[0]), as_int(f[1]), f[2],
                         f[3]);
    case TraceEventType::kAllocLruStart:
    case TraceEventType::kAllocLruEnd:
    case TraceEventType::kFreeLruStart:
    case TraceEventType::kFreeLruEnd:
    case TraceEventType::kAllocPageStart:
    case TraceEventType::kAllocPageEnd:
    case TraceEventType::kUnmapUserStart:
    case TraceEventType::kUnmapUserEnd:
      return fmt::format("proc={} page_index={}", as_int(f[0]), f[1]);
    case TraceEventType::kCommand:
      return command_text(as_uint(f[0]), core::command_name(as_uint(f[0])));
    case TraceEventType::kReturn:
      return command_text(as_uint(f[0]), core::return_name(as_uint(f[0])));
    case TraceEventType::kLockContended:
    case TraceEventType::kLockAcquired:
    case TraceEventType::kLockReleased:
      return lock_text(event);
    case TraceEventType::kPageInstall:
      return fmt::format("proc={} page_index={} pages={} ns={}", as_int(f[0]), f[1], f[2], f[3]);
    case TraceEventType::kPageReclaim:
      return fmt::format("proc={} page_index={} ns={}", as_int(f[0]), f[1], f[2]);
    case TraceEventType::kShrinkerPass:
      return fmt::format("scanned={} freed={} skipped={} ns={}", f[0], f[1], f[2], f[3]);
  }
  return {};
}

std::string trace_timestamp(std::chrono::steady_clock::time_point time) {
  const auto us =
      std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
  return fmt::format("{:5}.{:06}", us / 1000000, us % 1000000);
}

// trace_print_context with record-tgid: "%16s-%-7d ", "(%7d) " or "(-------) ", "[%03d] ", then
// the four latency flags (irqs-off, need-resched, hardirq/softirq, preempt-depth), which a
// userspace driver has none of.
std::string trace_line(const TraceLineTask& task, const TraceEvent& event) {
  std::string line;
  auto out = std::back_inserter(line);
  fmt::format_to(out, "{:>16}-{:<7} ", task.comm, task.tid);
  if (task.tgid > 0)
    fmt::format_to(out, "({:>7}) ", task.tgid);
  else
    fmt::format_to(out, "(-------) ");
  fmt::format_to(out, "[{:03}] .... {}: {}: {}\n", task.cpu, trace_timestamp(event.time),
                 trace_event_name(event.type), trace_event_fields(event));
  return line;
}

// The kernel's help lines, moved to this layout's columns. Four latency flags: kernels since 5.13
// print a fifth (migrate-disable), which older releases of Perfetto's importer do not accept.
std::string trace_header() {
  return "# tracer: nop\n"
         "#\n"
         "#                                          _-----=> irqs-off\n"
         "#                                         / _----=> need-resched\n"
         "#                                        | / _---=> hardirq/softirq\n"
         "#                                        || / _--=> preempt-depth\n"
         "#                                        ||| /     delay\n"
         "#           TASK-PID         TGID  CPU#  ||||   TIMESTAMP  FUNCTION\n"
         "#              | |              |    |   ||||       |         |\n";
}

}  // namespace cused::host
