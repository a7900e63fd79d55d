// SPDX-License-Identifier: GPL-2.0-only
// The shrinker's thread (docs/design.md section 4): core's policy (core/alloc/shrinker.h) run by a
// thread that sleeps in poll(2) on the pressure sources and on an eventfd that says "a request,
// a stress toggle or stop". It reclaims when asked ("shrink now", binderctl), on memory pressure,
// and continuously in stress mode, which exists to shake out reclaim races.
#pragma once

#include <poll.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/alloc/page_lru.h"
#include "core/alloc/shrinker.h"
#include "cused/host/pressure_source.h"

namespace cused::host {

struct ShrinkerOptions {
  bool stress = false;  // start in stress mode
  // What signals memory pressure; each event reclaims. The daemon's come from
  // memory_pressure.h (PSI, the cgroup's memory.events); tests use a pipe. None: the shrinker
  // reclaims only when asked or in stress mode.
  std::vector<std::unique_ptr<PressureSource>> sources;
  std::vector<std::string> unavailable;  // the sources that could not be set up, and why
};

class ShrinkerThread {
 public:
  explicit ShrinkerThread(core::alloc::PageLru& lru, ShrinkerOptions options = {});
  // Stops and joins the thread.
  ~ShrinkerThread();
  ShrinkerThread(const ShrinkerThread&) = delete;
  ShrinkerThread& operator=(const ShrinkerThread&) = delete;

  // Reclaims every page on the LRU, on the shrinker's thread, and returns what that returned.
  core::alloc::ReclaimResult shrink_now();
  // Stress mode: reclaim continuously.
  void set_stress(bool on);
  core::alloc::ShrinkerStats stats() const { return policy_.stats(); }

 private:
  void run();
  void wake();
  void drain_wakeups();
  // Polls the wakeup and the sources, without sleeping in stress mode: whether a source reported
  // pressure, or nothing when poll failed.
  std::optional<bool> wait_for_pressure(std::vector<pollfd>& fds, bool stress);

  std::vector<std::unique_ptr<PressureSource>> sources_;
  core::alloc::Shrinker policy_;
  int wake_fd_ = -1;    // eventfd: requests, stress toggles, stop
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace cused::host
