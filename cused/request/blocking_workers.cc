// SPDX-License-Identifier: GPL-2.0-only
#include "cused/request/blocking_workers.h"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <stdexcept>

namespace cused {

namespace {

constexpr int kWakeSignal = SIGUSR2;  // used nowhere else in the daemon

void install_wake_signal() {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_handler = [](int) {};
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: the blocking call must fail with EINTR
    return sigaction(kWakeSignal, &action, nullptr) == 0;
  }();
  if (!installed) throw std::runtime_error("cused: cannot install the worker wake-up signal");
}

// The daemon-wide stop signals go to the threads that handle them; the wake signal comes here.
void set_worker_signal_mask() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&set, signal);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  sigset_t wake;
  sigemptyset(&wake);
  sigaddset(&wake, kWakeSignal);
  pthread_sigmask(SIG_UNBLOCK, &wake, nullptr);
}

}  // namespace

void BlockingWorkers::start(unsigned count,
                            std::function<void(const std::atomic<bool>& stopping)> body) {
  install_wake_signal();
  for (unsigned i = 0; i < count; ++i) {
    workers_.push_back(std::make_unique<Worker>());
    Worker& worker = *workers_.back();
    worker.thread = std::thread([this, &worker, body] {
      set_worker_signal_mask();
      body(stopping_);
      worker.done.store(true, std::memory_order_release);
    });
  }
}

void BlockingWorkers::stop() {
  stopping_.store(true, std::memory_order_release);
  for (auto& worker : workers_) {
    // A signal that lands just before the worker enters its call is lost; send it until the
    // worker has left.
    while (!worker->done.load(std::memory_order_acquire)) {
      pthread_kill(worker->thread.native_handle(), kWakeSignal);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    worker->thread.join();
  }
  workers_.clear();
}

}  // namespace cused
