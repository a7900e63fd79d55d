// SPDX-License-Identifier: GPL-2.0-only
#include "cused/stop_signals.h"

#include <pthread.h>

namespace cused {

sigset_t StopSignals::set() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, signal);
  return signals;
}

void StopSignals::block() {
  sigset_t signals = set();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

StopSignals::StopSignals() : waiter_([this] { run(); }) {}

StopSignals::~StopSignals() {
  // The waiter takes this blocked signal as any other and sees that it is to end.
  closing_.store(true);
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
}

void StopSignals::on_stop(std::function<void()> stop) {
  std::lock_guard guard(lock_);
  stop_ = std::move(stop);
  if (requested_ && stop_) stop_();
}

void StopSignals::wait() {
  std::unique_lock guard(lock_);
  signalled_.wait(guard, [this] { return requested_; });
}

void StopSignals::run() {
  sigset_t signals = set();
  for (;;) {
    int signal = 0;
    if (sigwait(&signals, &signal) != 0) continue;
    if (closing_.load()) return;
    std::lock_guard guard(lock_);
    requested_ = true;
    if (stop_) stop_();
    signalled_.notify_all();
  }
}

}  // namespace cused
