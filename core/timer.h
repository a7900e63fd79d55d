// SPDX-License-Identifier: GPL-2.0-only
// Time, the one OS service core needs that is not tied to a request: BINDER_FREEZE with a timeout
// (S2.10) waits up to timeout_ms for a proc to drain, and install_latency_us= puts back the cost
// of installing a page. The engine never blocks on the first: it parks the ioctl, and the timer
// fires the deadline or runs the continuation when the drain happens first. The daemon's timer is
// a thread of the host's (cused/host/thread_timer.h); core's unit tests use one they advance
// themselves. The Driver is given one (Driver::set_timer) and does not own it: a callback may
// drop the last reference to a Driver.
#pragma once

#include <chrono>
#include <functional>

namespace cused::core {

class Timer {
 public:
  using Callback = std::function<void()>;

  virtual ~Timer() = default;

  // Runs `callback` once `delay` has passed, on a thread of the timer's and with no engine lock
  // held; callbacks run one at a time, in deadline order. Never runs it inside the call.
  virtual void after(std::chrono::milliseconds delay, Callback callback) = 0;
  void soon(Callback callback) { after(std::chrono::milliseconds(0), std::move(callback)); }

  // Blocks the calling thread for `duration` (with whatever locks it holds): a cost the variant
  // simulates, never a wait for an event.
  virtual void sleep(std::chrono::microseconds duration) = 0;
};

}  // namespace cused::core
