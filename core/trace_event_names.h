// SPDX-License-Identifier: GPL-2.0-only
// The names of core's trace events (core/trace_events.h) as tracefs names them: the kernel's
// binder_* events and cused's own cused_*. For the trace's text (cused/host/ftrace_text.h) and for
// the programs that print what a trace dropped per event (binderctl, binder-ab), which the
// daemon reports by event type (uapi/cused.h, cused_trace.dropped_by_event).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/trace_events.h"

namespace cused::core {

inline constexpr std::array<std::string_view, kTraceEventTypes> kTraceEventNames{
    "binder_ioctl",
    "binder_ioctl_done",
    "binder_write_done",
    "binder_read_done",
    "binder_wait_for_work",
    "binder_txn_latency_free",
    "binder_transaction",
    "binder_transaction_received",
    "binder_transaction_node_to_ref",
    "binder_transaction_ref_to_node",
    "binder_transaction_ref_to_ref",
    "binder_transaction_fd_send",
    "binder_transaction_fd_recv",
    "binder_transaction_alloc_buf",
    "binder_transaction_buffer_release",
    "binder_transaction_failed_buffer_release",
    "binder_update_page_range",
    "binder_alloc_lru_start",
    "binder_alloc_lru_end",
    "binder_free_lru_start",
    "binder_free_lru_end",
    "binder_alloc_page_start",
    "binder_alloc_page_end",
    "binder_unmap_user_start",
    "binder_unmap_user_end",
    "binder_command",
    "binder_return",
    "cused_lock_contended",
    "cused_lock_acquired",
    "cused_lock_released",
    "cused_page_install",
    "cused_page_reclaim",
    "cused_shrinker_pass",
};

inline std::string_view trace_event_name(TraceEventType type) {
  return kTraceEventNames[static_cast<std::size_t>(type)];
}

// Counts per event type, as "binder_transaction=12 cused_lock_released=3": the ones above 0, in
// the types' order; empty when all are 0. What the trace's end line, binderctl and binder-ab
// print of the drops.
inline std::string trace_event_counts_text(std::span<const std::uint64_t> counts) {
  std::string text;
  for (std::size_t type = 0; type < counts.size() && type < kTraceEventTypes; ++type) {
    if (counts[type] == 0) continue;
    if (!text.empty()) text += ' ';
    text += kTraceEventNames[type];
    text += '=';
    text += std::to_string(counts[type]);
  }
  return text;
}

}  // namespace cused::core
