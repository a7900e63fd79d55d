// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/thread_timer.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <system_error>
#include <vector>

namespace cused::host {

ThreadTimer& ThreadTimer::shared() {
  static ThreadTimer timer;
  return timer;
}

ThreadTimer::ThreadTimer() : wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

ThreadTimer::~ThreadTimer() {
  {
    sync::LockGuard guard(lock_);
    stop_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
  close(wake_fd_);
}

void ThreadTimer::after(std::chrono::milliseconds delay, Callback callback) {
  bool earliest;
  {
    sync::LockGuard guard(lock_);
    auto it = entries_.emplace(Clock::now() + delay, std::move(callback));
    earliest = it == entries_.begin();
    if (!started_) {
      started_ = true;
      thread_ = std::thread([this] { run(); });
    }
  }
  if (earliest) wake();
}

void ThreadTimer::sleep(std::chrono::microseconds duration) {
  std::this_thread::sleep_for(duration);
}

void ThreadTimer::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void ThreadTimer::run() {
  for (;;) {
    std::vector<Callback> due;
    int timeout_ms = -1;
    {
      sync::LockGuard guard(lock_);
      if (stop_) return;
      const auto now = Clock::now();
      while (!entries_.empty() && entries_.begin()->first <= now) {
        due.push_back(std::move(entries_.begin()->second));
        entries_.erase(entries_.begin());
      }
      if (due.empty() && !entries_.empty()) {
        auto wait = std::chrono::ceil<std::chrono::milliseconds>(entries_.begin()->first - now);
        timeout_ms = static_cast<int>(std::min<std::int64_t>(wait.count(), 60'000));
      }
    }
    if (!due.empty()) {
      for (auto& callback : due) callback();
      continue;
    }
    pollfd pfd{wake_fd_, POLLIN, 0};
    poll(&pfd, 1, timeout_ms);
    std::uint64_t count;
    [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof count);
  }
}

}  // namespace cused::host
