// SPDX-License-Identifier: GPL-2.0-only
// core::Timer for unit tests: time is a number the test moves. Deadlines fire only in run_due() /
// advance*(), on the thread that calls them (the test's, holding no engine lock), so a freeze
// timeout ends exactly when the test says; sleep() counts the simulated cost instead of paying it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "core/timer.h"

namespace cused::testing {

class FakeTimer final : public core::Timer {
 public:
  using Duration = std::chrono::milliseconds;

  void after(Duration delay, Callback callback) override {
    std::lock_guard guard(lock_);
    entries_.emplace(std::pair(now_ + delay, next_seq_++), std::move(callback));
  }
  void sleep(std::chrono::microseconds duration) override {
    std::lock_guard guard(lock_);
    slept_ += duration;
  }

  // Runs every callback due at the current time, in deadline order, including the ones they add
  // for now. Returns whether any ran.
  bool run_due() {
    bool ran = false;
    while (Callback callback = take_due()) {
      callback();
      ran = true;
    }
    return ran;
  }
  // Moves the clock forward by `delta`, running each callback as its deadline is reached.
  void advance(Duration delta) {
    const Duration end = now() + delta;
    while (auto next = next_deadline()) {
      if (*next > end) break;
      set_now(*next);
      run_due();
    }
    set_now(end);
  }
  // Moves the clock to the earliest pending deadline and runs what is due there; false if none.
  bool advance_to_next() {
    auto next = next_deadline();
    if (!next) return false;
    set_now(std::max(*next, now()));
    run_due();
    return true;
  }

  Duration now() const {
    std::lock_guard guard(lock_);
    return now_;
  }
  // The total of every sleep() so far.
  std::chrono::microseconds slept() const {
    std::lock_guard guard(lock_);
    return slept_;
  }

 private:
  // Entries in deadline order, and in the order they were added within one deadline.
  using Key = std::pair<Duration, std::uint64_t>;

  Callback take_due() {
    std::lock_guard guard(lock_);
    if (entries_.empty() || entries_.begin()->first.first > now_) return {};
    Callback callback = std::move(entries_.begin()->second);
    entries_.erase(entries_.begin());
    return callback;
  }
  std::optional<Duration> next_deadline() const {
    std::lock_guard guard(lock_);
    if (entries_.empty()) return std::nullopt;
    return entries_.begin()->first.first;
  }
  void set_now(Duration now) {
    std::lock_guard guard(lock_);
    now_ = now;
  }

  mutable std::mutex lock_;
  Duration now_{0};
  std::uint64_t next_seq_ = 0;
  std::map<Key, Callback> entries_;
  std::chrono::microseconds slept_{0};
};

}  // namespace cused::testing
