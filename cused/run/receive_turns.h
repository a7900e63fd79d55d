// Which of a program's receivers waits for its next seccomp notification. The kernel (6.6 and
// later) wakes every thread blocked in SECCOMP_IOCTL_NOTIF_RECV on a listener for each
// notification (they wait on a non-exclusive wait queue), so with two receivers blocked there
// every notification cost a second, wasted thread switch (docs/performance.md, "Anatomy of a
// call"). Waiting for the turn in epoll instead (whose waiters are woken one at a time) loses
// the listener's synchronous wake-up, which costs a cross-CPU wake-up per notification.
//
// So one receiver at a time, the one whose turn it is, blocks in RECV; the others wait here.
// Having received, the receiver keeps the turn unless another notification is already
// waiting (poll, no wait), in which case it hands the turn on while it serves its own. A
// ping-pong therefore stays on one receiver and costs no extra switch; notifications that
// arrive together are served in parallel, and one that arrives while the receiver serves
// waits for that one request at most.
#pragma once

#include <atomic>

namespace cused::run {

class ReceiveTurns {
 public:
  explicit ReceiveTurns(int listener_fd) : listener_fd_(listener_fd) {}

  // Blocks until this thread has the turn; false once release_all() was called.
  bool take();
  // After a notification was received by the thread with the turn: gives the turn up (true)
  // when another notification is waiting already.
  bool hand_on_if_waiting();
  // Wakes every thread waiting in take(), for good: the receivers stop.
  void release_all();

 private:
  enum State : int { kFree, kTaken, kReleased };
  const int listener_fd_;
  std::atomic<int> state_{kFree};
};

}  // namespace cused::run
