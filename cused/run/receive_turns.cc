#include "cused/run/receive_turns.h"

#include <poll.h>

namespace cused::run {

bool ReceiveTurns::take() {
  for (;;) {
    int state = state_.load(std::memory_order_acquire);
    if (state == kReleased) return false;
    if (state == kFree && state_.compare_exchange_weak(state, kTaken, std::memory_order_acquire))
      return true;
    if (state == kTaken) state_.wait(kTaken, std::memory_order_acquire);
  }
}

bool ReceiveTurns::hand_on_if_waiting() {
  pollfd listener{listener_fd_, POLLIN, 0};
  if (poll(&listener, 1, 0) != 1 || !(listener.revents & POLLIN)) return false;
  int taken = kTaken;
  if (!state_.compare_exchange_strong(taken, kFree, std::memory_order_release)) return false;
  state_.notify_one();
  return true;
}

void ReceiveTurns::release_all() {
  state_.store(kReleased, std::memory_order_release);
  state_.notify_all();
}

}  // namespace cused::run
