// SPDX-License-Identifier: GPL-2.0-only
// core::Timer on a thread of its own: deadlines kept in a map, the thread sleeping in poll(2) until
// the earliest one or an eventfd that says a new earliest deadline (or stop) arrived. One per
// daemon process (shared()), so that it outlives every Driver its callbacks may drop.
#pragma once

#include <chrono>
#include <map>
#include <thread>

#include "core/sync/mutex.h"
#include "core/sync/thread_annotations.h"
#include "core/timer.h"

namespace cused::host {

class ThreadTimer final : public core::Timer {
 public:
  using Clock = std::chrono::steady_clock;

  // The process's timer, created on first use (after the default Driver, so that it is destroyed
  // before it: a pending callback may hold a proc).
  static ThreadTimer& shared();

  ThreadTimer();
  // Stops and joins the thread; callbacks not yet due are dropped.
  ~ThreadTimer() override;
  ThreadTimer(const ThreadTimer&) = delete;
  ThreadTimer& operator=(const ThreadTimer&) = delete;

  void after(std::chrono::milliseconds delay, Callback callback) override CUSED_EXCLUDES(lock_);
  void sleep(std::chrono::microseconds duration) override;

 private:
  void run() CUSED_EXCLUDES(lock_);
  void wake();

  int wake_fd_ = -1;  // eventfd: a new earliest deadline, or stop
  sync::Mutex lock_;
  std::multimap<Clock::time_point, Callback> entries_ CUSED_GUARDED_BY(lock_);
  bool stop_ CUSED_GUARDED_BY(lock_) = false;
  bool started_ CUSED_GUARDED_BY(lock_) = false;
  // Started with the first deadline: a daemon that forks into the background has no thread yet.
  std::thread thread_;
};

}  // namespace cused::host
