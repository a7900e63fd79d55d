// SPDX-License-Identifier: GPL-2.0-only
// A condition variable over core/sync's locks that -Wthread-safety can follow: wait() requires the
// lock it sleeps on (it drops and retakes it inside, as std::condition_variable_any does), so the
// fields a waiter tests stay annotated with their lock. Callers loop on their own condition.
#pragma once

#include <chrono>
#include <condition_variable>

#include "core/sync/thread_annotations.h"

namespace cused::sync {

class CondVar {
 public:
  template <typename Lock>
  void wait(Lock& lock) CUSED_REQUIRES(lock) {
    cv_.wait(lock);
  }
  // False once `deadline` has passed.
  template <typename Lock, typename Clock, typename Duration>
  bool wait_until(Lock& lock, std::chrono::time_point<Clock, Duration> deadline)
      CUSED_REQUIRES(lock) {
    return cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable_any cv_;
};

}  // namespace cused::sync
