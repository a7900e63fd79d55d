// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/receive_turns.h"

namespace cused::run {

bool ReceiveTurns::take() {
  for (;;) {
    int state = state_.load(std::memory_order_acquire);
    if (state == kReleased) return false;
    if (state == kEveryone) return true;
    if (state == kFree && state_.compare_exchange_weak(state, kTaken, std::memory_order_acquire))
      return true;
    if (state == kTaken) state_.wait(kTaken, std::memory_order_acquire);
  }
}

void ReceiveTurns::received_from(pid_t tid) {
  if (state_.load(std::memory_order_relaxed) != kTaken) return;  // everyone's turn, or stopping
  pid_t first = 0;
  if (first_tid_.compare_exchange_strong(first, tid, std::memory_order_relaxed) || first == tid)
    return;
  int state = state_.load(std::memory_order_relaxed);
  while (state == kFree || state == kTaken)
    if (state_.compare_exchange_weak(state, kEveryone, std::memory_order_release)) {
      state_.notify_all();
      return;
    }
}

void ReceiveTurns::release_all() {
  state_.store(kReleased, std::memory_order_release);
  state_.notify_all();
}

}  // namespace cused::run
