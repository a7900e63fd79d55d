// SPDX-License-Identifier: GPL-2.0-only
// Feeds the USDT probes (usdt_probes.h) while a tracer is attached and no trace is being written:
// core emits nothing without a sink, so that tracing off costs one branch; a tracer attached to a
// probe raises its semaphore, and this feed, which looks at the semaphores every kPollPeriod,
// then makes core emit into a sink that only fires the probes. It gives way to a trace being
// written (the recorder fires the probes itself) and takes its sink out once no probe is attached.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "core/trace_events.h"
#include "cused/host/task_priority.h"

namespace cused::host {

// The sink that fires the probes and keeps nothing.
class UsdtSink final : public TaskStateSink {
 public:
  void record(const core::TraceEvent& event) override;
};

class UsdtFeed {
 public:
  static constexpr std::chrono::milliseconds kPollPeriod{100};

  // `attached` says whether a tracer is attached now (usdt_probe_attached(), or a test's).
  // Starts the polling thread; nothing when the daemon has no probes (usdt_probes_built()).
  explicit UsdtFeed(std::function<bool()> attached);
  // Takes the feed's sink out, if it is core's, and stops the thread.
  ~UsdtFeed();
  UsdtFeed(const UsdtFeed&) = delete;
  UsdtFeed& operator=(const UsdtFeed&) = delete;

  // One look at the semaphores, as the thread takes every kPollPeriod; true while the probes
  // fire (through this feed's sink or a trace's recorder). A tracer's arrival and departure are
  // said on stderr.
  bool poll();
  // The sink the feed installs: never destroyed, since a daemon thread may still be inside it.
  static UsdtSink& sink();

 private:
  void run();

  std::function<bool()> attached_;
  std::atomic<bool> announced_attached_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cused::host
