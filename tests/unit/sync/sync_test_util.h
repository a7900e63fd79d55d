// SPDX-License-Identifier: GPL-2.0-only
// Thread helpers for the sync tests.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace cused::sync::testing {

// Whether try_lock succeeds; what it takes is released at once.
template <typename Lock>
bool try_lock_and_release(Lock& lock) {
  if (!lock.try_lock()) return false;
  lock.unlock();
  return true;
}

// How long a test waits for another thread to reach a state before it declares it stuck: far
// beyond any scheduling delay, short of meson's test timeout.
inline constexpr std::chrono::seconds kStuckAfter{20};

// Polls `condition` until it holds. A thread that never gets there is stuck in lock() (a lost
// wake-up) and cannot be joined, so the test binary reports it and exits.
inline void wait_until(const std::function<bool()>& condition, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + kStuckAfter;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "stuck for " << kStuckAfter.count() << " s waiting for: " << what;
      std::fflush(nullptr);
      std::_Exit(EXIT_FAILURE);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// Runs body(0) .. body(threads - 1) on their own threads and joins them, failing the binary as
// stuck (wait_until) when they do not all finish in time.
inline void run_threads(int threads, const std::function<void(int)>& body) {
  std::atomic<int> finished{0};
  std::vector<std::jthread> running;
  running.reserve(threads);
  for (int i = 0; i < threads; ++i) {
    running.emplace_back([&, i] {
      body(i);
      finished.fetch_add(1);
    });
  }
  wait_until([&] { return finished.load() == threads; }, "every thread to finish");
}

}  // namespace cused::sync::testing
