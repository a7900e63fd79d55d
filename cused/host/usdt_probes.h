// SPDX-License-Identifier: GPL-2.0-only
// USDT probes (<sys/sdt.h>, provider "cused") at the points of core's trace events: each event
// the trace recorder or the USDT feed (usdt_feed.h) receives fires the probe of the same name, so
// that `bpftrace -e 'usdt:build/cused/cused:cused:binder_transaction { ... }'` and `perf probe` see
// it (docs/tracing.md "USDT probes"). Built without sys/sdt.h (Debian's systemtap-sdt-dev), the
// probes are nothing.
#pragma once

#include "core/trace_events.h"

namespace cused::host {

// Every probe has the same arguments: arg0 the task's tid, arg1 its tgid (0: no client, the
// daemon's own thread), arg2.. the event's fields in core/trace_events.h's order.
void fire_usdt_probe(const core::TraceEvent& event);

// Whether a tracer is attached to any probe now (its semaphore raised); false without sys/sdt.h.
bool usdt_probe_attached();
// Whether the daemon was built with the probes.
bool usdt_probes_built();

}  // namespace cused::host
