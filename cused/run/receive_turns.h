// SPDX-License-Identifier: GPL-2.0-only
// Which of a program's receivers waits for its next seccomp notification. The kernel (6.6 and
// later) wakes every thread blocked in SECCOMP_IOCTL_NOTIF_RECV on a listener for each
// notification (they wait on a non-exclusive wait queue), so with two receivers blocked there
// every notification cost a second, wasted thread switch (docs/performance.md, "Anatomy of a
// call"). Waiting for the turn in epoll instead (whose waiters are woken one at a time) loses
// the listener's synchronous wake-up, which costs a cross-CPU wake-up per notification.
//
// So while a program's binder calls all came from one thread, one receiver at a time, the one
// whose turn it is, blocks in RECV and the others wait here: a notified task waits for its
// answer, so such a program cannot have a second notification waiting, and a ping-pong costs
// no extra switch. Once a second thread of the program was notified, every receiver waits in
// RECV, as many as there are, woken together by each notification: a notification never waits
// for a receiver. Handing the turn on after each receipt instead (one receiver in RECV, the
// next woken to take its place) made the quickstart workload's P99 latency (two workers of one
// program on two CPUs) 41 % longer, and keeping it until another notification was seen
// waiting made its throughput 5.9 % lower (docs/performance.md, "Anatomy of a call").
#pragma once

#include <sys/types.h>

#include <atomic>

namespace cused::run {

class ReceiveTurns {
 public:
  // Blocks until this thread has the turn (or every thread has it), which it then keeps; false
  // once release_all() was called.
  bool take();
  // After a receiver received a notification of task `tid`: from the first notification of a
  // second task on, every receiver has the turn.
  void received_from(pid_t tid);
  // Wakes every thread waiting in take(), for good: the receivers stop.
  void release_all();

 private:
  enum State : int { kFree, kTaken, kEveryone, kReleased };
  std::atomic<int> state_{kFree};
  std::atomic<pid_t> first_tid_{0};  // the first task notified
};

}  // namespace cused::run
