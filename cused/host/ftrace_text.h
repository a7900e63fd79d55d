// SPDX-License-Identifier: GPL-2.0-only
// The text of tracefs's `trace` file (docs/tracing.md): core's binder events (core/trace_events.h)
// printed as the kernel's TP_printk formats in drivers/android/binder_trace.h print them, in lines
// laid out as kernel/trace/trace_output.c lays them out with options/record-tgid, under the
// header of the kernel's `nop` tracer. Perfetto's systrace importer (trace_processor, the UI's
// "Open trace file") reads this text.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>

#include "core/trace_event_names.h"  // trace_event_name(): "binder_transaction", ...
#include "core/trace_events.h"

namespace cused::host {

// What follows "name: " on the event's line: "transaction=12 dest_node=5 ...".
std::string trace_event_fields(const core::TraceEvent& event);

// Who and where a line is: the task's name (comm), tid and thread group (0: unknown, printed
// as the kernel prints a task it recorded no tgid for), the CPU.
struct TraceLineTask {
  std::string_view comm;
  pid_t tid = 0;
  pid_t tgid = 0;
  int cpu = 0;
};

// One line with its newline:
// " binder-throughp-4321    (   4320) [001] ....  5123.456789: binder_command: cmd=0x40406300
// BC_TRANSACTION"
std::string trace_line(const TraceLineTask& task, const core::TraceEvent& event);

// CLOCK_MONOTONIC as ftrace prints it: seconds, a dot, six digits of microseconds.
std::string trace_timestamp(std::chrono::steady_clock::time_point time);

// The lines above the events, as the kernel prints them for a tracer without latency fields.
std::string trace_header();

}  // namespace cused::host
