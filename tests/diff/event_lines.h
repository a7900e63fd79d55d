// SPDX-License-Identifier: GPL-2.0-only
// A driver's binder trace events for one script run (tracefs's `events/binder/*` on the kernel,
// `cused --trace` / CUSED_CTL_TRACE on cused: docs/tracing.md), read from the text of tracefs's
// `trace` file and normalised so that the kernel's events and cused's compare per task
// (docs/reliability.md, "Differential testing", "Trace events"). The task becomes its role in
// the script ("s1.t0"; "other" for a task no slot owns: a kworker, the daemon's own thread);
// debug ids, which only say which object in the driver's own numbering, are mapped to the order
// of their first appearance in that task's events ("t1" the task's first transaction id, "n1"
// its first node id, "r1" its first ref id); pids and tids become roles; an ioctl's argument
// address becomes "addr" (event_lines.cc says why); times are dropped. Everything else is
// compared as printed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tests/diff/proc_state.h"

namespace cused::diff {

// Events of binder_trace.h that cused emits by design never (docs/tracing.md, "Not emitted"),
// and cused's own `cused_*`: left out of what is compared.
bool compared_event(std::string_view name);

// The normalised events of one run, in the file's order: "s1.t0 binder_ioctl: cmd=0xc0306201
// arg=addr". Lines that are not events (the header, cused's closing comment) are skipped.
std::vector<std::string> normalise_events(const std::vector<std::string>& lines,
                                          const Roles& roles);

// The role a normalised line belongs to ("s1.t0"), and the rest ("binder_ioctl: ...").
std::string_view event_role(std::string_view normalised);
std::string_view event_text(std::string_view normalised);

}  // namespace cused::diff
