#include "core/timer.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>
#include <vector>

namespace cused::core {

Timer& Timer::shared() {
  static Timer timer;
  return timer;
}

Timer::Timer() : wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

Timer::~Timer() {
  {
    sync::LockGuard guard(lock_);
    stop_ = true;
  }
  wake();
  if (thread_.joinable()) thread_.join();
  close(wake_fd_);
}

void Timer::at(Clock::time_point when, Callback callback) {
  bool earliest;
  {
    sync::LockGuard guard(lock_);
    auto it = entries_.emplace(when, std::move(callback));
    earliest = it == entries_.begin();
    if (!started_) {
      started_ = true;
      thread_ = std::thread([this] { run(); });
    }
  }
  if (earliest) wake();
}

void Timer::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void Timer::run() {
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

}  // namespace cused::core
