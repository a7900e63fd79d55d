// Where a driver's binder trace events come from while one script runs (docs/reliability.md,
// "Trace events"): the kernel's tracefs (`events/binder/enable`, the `trace` file), or cused's
// trace file, started and stopped through the daemon's binder-control (CUSED_CTL_TRACE,
// docs/tracing.md). Either gives the lines of tracefs's `trace` text, for event_lines.h.
#pragma once

#include <string>
#include <vector>

namespace cused::diff {

class EventSource {
 public:
  virtual ~EventSource() = default;
  virtual void start() = 0;
  virtual std::vector<std::string> stop() = 0;  // the lines written since start()
};

// The kernel's: TRACEFS is where tracefs is mounted (/sys/kernel/tracing).
class TracefsEvents : public EventSource {
 public:
  explicit TracefsEvents(std::string tracefs);
  void start() override;
  std::vector<std::string> stop() override;

 private:
  std::string tracefs_;
};

// cused's: CONTROL is the daemon's binder-control, FILE where the daemon writes the trace.
class CusedEvents : public EventSource {
 public:
  CusedEvents(const std::string& control, std::string file);
  ~CusedEvents() override;
  void start() override;
  std::vector<std::string> stop() override;

 private:
  void trace(bool start) const;
  int fd_ = -1;
  std::string file_;
};

}  // namespace cused::diff
