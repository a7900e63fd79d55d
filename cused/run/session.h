// SPDX-License-Identifier: GPL-2.0-only
// One program started by `cused run` (and everything it forks), as the daemon serves it: its
// seccomp listener, and the daemon-wide pieces its requests use. A session lives while some
// request of it is outstanding or its listener has tasks; completions hold it (shared_ptr).
#pragma once

#include <sys/types.h>

#include <memory>

#include "cused/run/listener.h"
#include "cused/run/receive_turns.h"

namespace cused {
class InterruptWorker;
class SignalWatcher;
}  // namespace cused

namespace cused::run {

struct Session {
  Session(int listener_fd, pid_t root, InterruptWorker& interrupts, SignalWatcher& signals)
      : listener(listener_fd), root(root), interrupts(interrupts), signals(signals) {}

  const Listener listener;
  ReceiveTurns turns;  // which receiver waits for the next notification
  const pid_t root;    // the program `cused run` started, for logs
  InterruptWorker& interrupts;
  SignalWatcher& signals;
};

}  // namespace cused::run
