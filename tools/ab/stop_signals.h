// SPDX-License-Identifier: GPL-2.0-only
// binder-ab stopped by a signal (Ctrl-C, a script's cleanup, a closed terminal): the block setup
// (a daemon, its mount, its servicemanagers) and the running workload live in process groups of
// their own, which a terminal's Ctrl-C does not reach, and the block's ready-file directory is
// removed only by a destructor that a signal's default action never runs. So binder-ab waits for
// SIGINT, SIGTERM and SIGHUP in a thread of its own; on one, it runs the cleanups registered at
// that moment, newest first, and exits with 128 + the signal, as the default action would have
// told its caller.
#pragma once

#include <spawn.h>

#include <functional>

namespace cused::tools::ab {

// Blocks the stop signals in the calling thread (call it in main before any thread starts, so
// that every thread inherits the mask) and starts the thread that waits for them.
void watch_stop_signals();

// Where binder-ab would exit: if a stop signal's cleanups are running, waits for them (they end
// the process with 128 + the signal). Without it, an error the cleanups cause (the block's daemon
// killed under a running measurement) ended binder-ab from the main thread with status 1 while
// the cleanups were half done (a zram device, a cgroup left behind).
void wait_if_stopping();

// A child spawned with `attributes` (posix_spawnattr_init'ed) runs in a process group of its own,
// which binder-ab can end whole, with nothing of binder-ab's signal mask: nothing blocked and
// the stop signals at their default action.
void spawn_in_own_group(posix_spawnattr_t* attributes);

// While alive, `cleanup` runs if a stop signal comes (from the watching thread: it must be safe
// to run beside whatever the main thread is doing at the time).
class StopCleanup {
 public:
  explicit StopCleanup(std::function<void()> cleanup);
  ~StopCleanup();
  StopCleanup(const StopCleanup&) = delete;
  StopCleanup& operator=(const StopCleanup&) = delete;

 private:
  unsigned long id_;
};

}  // namespace cused::tools::ab
