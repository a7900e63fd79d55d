// SPDX-License-Identifier: GPL-2.0-only
// Threads that wait in a blocking system call for requests (a read of the CUSE channel, a seccomp
// listener's SECCOMP_IOCTL_NOTIF_RECV) and cannot be woken by closing what they wait on: a call
// in progress keeps its file. stop() wakes them with a signal whose handler does nothing and
// which does not restart calls (SIGUSR2: that call fails with EINTR), until each has left.
// The daemon's stop signals stay blocked on these threads (the FUSE loop and main's sigwait take
// them).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace cused {

class BlockingWorkers {
 public:
  BlockingWorkers() = default;
  ~BlockingWorkers() { stop(); }
  BlockingWorkers(const BlockingWorkers&) = delete;
  BlockingWorkers& operator=(const BlockingWorkers&) = delete;

  // Runs `count` threads of `body`, which loops until `stopping` says so (a call it blocks in
  // fails with EINTR once stop() began).
  void start(unsigned count, std::function<void(const std::atomic<bool>& stopping)> body);
  // Stops and joins every thread; idempotent. Not from one of the workers.
  void stop();

 private:
  struct Worker {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace cused
