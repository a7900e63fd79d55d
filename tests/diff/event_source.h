// SPDX-License-Identifier: GPL-2.0-only
// Where a driver's binder trace events come from while one script runs (docs/reliability.md,
// "Trace events"): the kernel's tracefs (`events/binder/enable`, the `trace` file), or cused's
// trace file, started and stopped through the daemon's binder-control (CUSED_CTL_TRACE,
// docs/tracing.md). Either gives the lines of tracefs's `trace` text, for event_lines.h.
#pragma once

#include <string>
#include <vector>

#include "tools/programs/binderctl_control.h"

namespace cused::diff {

class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual void start() = 0;
  virtual std::vector<std::string> stop() = 0;  // the lines written since start()
};

// The kernel's: TRACEFS is where tracefs is mounted (/sys/kernel/tracing). The binder events
// stay enabled from construction to destruction and `tracing_on` gates the ring buffer around
// each script: enabling an event patches the kernel's text (its static key, and the
// sched_switch/sched_wakeup probes that record comms), and on a qemu TCG guest a patch racing
// the other vCPU's execution of the patched code ended in "Oops: int3" in ttwu_do_activate.
class TracefsEvents : public EventSource {
 public:
  explicit TracefsEvents(std::string tracefs);
  ~TracefsEvents() override;
  TracefsEvents(const TracefsEvents&) = delete;
  TracefsEvents& operator=(const TracefsEvents&) = delete;
  void start() override;
  std::vector<std::string> stop() override;

 private:
  std::string tracefs_;
};

// cused's: CONTROL is the daemon's binder-control, FILE where the daemon writes the trace.
class CusedEvents : public EventSource {
 public:
  CusedEvents(const std::string& control, std::string file);
  void start() override;
  std::vector<std::string> stop() override;

 private:
  void trace(const std::string& path) const;
  binderctl::ControlFile control_;
  std::string file_;
};

}  // namespace cused::diff
