// SPDX-License-Identifier: GPL-2.0-only
// The daemon's stop signals (SIGTERM, SIGINT, SIGHUP): blocked from main's first line, so that
// one arriving while the daemon starts (or while it unmounts) cannot kill it with the default
// action and leave a dead mount ("Transport endpoint is not connected"); a thread of their own
// waits for them and asks for a clean stop. A stop asked for before there is anything to stop
// is kept, and carried out as soon as there is.
#pragma once

#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace cused {

class StopSignals {
 public:
  // SIGTERM, SIGINT and SIGHUP.
  static sigset_t set();
  // Blocks them in the calling thread: call first in main, before any thread or fork exists,
  // so that every thread and child inherits the mask.
  static void block();

  // Starts the thread that waits for them (after a daemon's fork to the background).
  StopSignals();
  // Ends the waiting thread.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // What a stop signal does from now on (on the waiting thread); run at once if one came already.
  void on_stop(std::function<void()> stop);
  // Waits for a stop signal on the calling thread (a daemon without a FUSE loop to end).
  void wait();

 private:
  void run();

  std::mutex lock_;
  std::condition_variable signalled_;
  std::function<void()> stop_;  // guarded by lock_
  bool requested_ = false;      // guarded by lock_
  std::atomic<bool> closing_{false};
  std::thread waiter_;
};

// Sets the stop action for its lifetime: declared after what the action uses, so that it is
// cleared before that goes.
class StopAction {
 public:
  StopAction(StopSignals& signals, std::function<void()> stop) : signals_(signals) {
    signals_.on_stop(std::move(stop));
  }
  ~StopAction() { signals_.on_stop({}); }
  StopAction(const StopAction&) = delete;
  StopAction& operator=(const StopAction&) = delete;

 private:
  StopSignals& signals_;
};

}  // namespace cused
