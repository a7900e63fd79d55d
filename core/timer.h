// Deadlines without a sleeping daemon thread: the one place core waits for time. BINDER_FREEZE
// with a timeout (S2.10) waits up to timeout_ms for a proc to drain; the engine parks the ioctl
// instead of blocking, and this timer thread fires the deadline or runs the continuation when the
// drain happens first. One per daemon process (a callback may drop the last reference to a
// Driver, so the timer must not belong to one).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "core/sync/mutex.h"
#include "core/sync/thread_annotations.h"

namespace cused::core {

class Timer {
 public:
  using Clock = std::chrono::steady_clock;
  using Callback = std::function<void()>;

  static Timer& shared();

  Timer();
  // Stops and joins the thread; callbacks not yet due are dropped.
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Runs `callback` on the timer thread at `when` (or at once if it has passed). Callbacks run
  // with no engine lock held, one at a time, in deadline order.
  void at(Clock::time_point when, Callback callback) CUSED_EXCLUDES(lock_);
  void soon(Callback callback) { at(Clock::now(), std::move(callback)); }

 private:
  void run() CUSED_EXCLUDES(lock_);
  void wake();

  int wake_fd_ = -1;  // eventfd: a new earliest deadline, or stop
  sync::Mutex lock_;
  std::multimap<Clock::time_point, Callback> entries_ CUSED_GUARDED_BY(lock_);
  bool stop_ CUSED_GUARDED_BY(lock_) = false;
  bool started_ CUSED_GUARDED_BY(lock_) = false;
  std::thread thread_;  // started with the first deadline
};

}  // namespace cused::core
