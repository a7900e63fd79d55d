#include "core/alloc/shrinker.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace cused::core::alloc {

Shrinker::Shrinker(PageLru& lru, ShrinkerOptions options) : lru_(lru) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  sources_ = std::move(options.sources);
  {
    sync::LockGuard guard(mutex_);
    stats_.stress = options.stress;
    for (const auto& source : sources_) stats_.sources.emplace_back(source->name());
    stats_.unavailable = std::move(options.unavailable);
  }
  thread_ = std::thread([this] { run(); });
}

Shrinker::~Shrinker() {
  {
    sync::LockGuard guard(mutex_);
    stop_ = true;
  }
  wake();
  thread_.join();
  close(wake_fd_);
}

void Shrinker::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void Shrinker::drain_wakeups() {
  std::uint64_t count;
  [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof count);
}

ReclaimResult Shrinker::shrink_now() {
  std::future<ReclaimResult> done;
  {
    sync::LockGuard guard(mutex_);
    pending_.emplace_back();
    done = pending_.back().get_future();
  }
  wake();
  return done.get();
}

void Shrinker::set_stress(bool on) {
  {
    sync::LockGuard guard(mutex_);
    stats_.stress = on;
  }
  wake();
}

ShrinkerStats Shrinker::stats() const {
  sync::LockGuard guard(mutex_);
  return stats_;
}

void Shrinker::reclaim_all(bool pressure, std::vector<std::promise<ReclaimResult>> requests) {
  ReclaimResult result = lru_.reclaim();
  sync::LockGuard guard(mutex_);
  ++stats_.passes;
  stats_.pages += result.pages;
  stats_.bytes += result.bytes;
  stats_.skipped += result.skipped;
  if (pressure) ++stats_.pressure_events;
  stats_.requests += requests.size();
  for (auto& request : requests) request.set_value(result);
}

void Shrinker::run() {
  std::vector<pollfd> fds;
  fds.push_back({wake_fd_, POLLIN, 0});
  for (const auto& source : sources_) fds.push_back({source->fd(), source->events(), 0});
  for (;;) {
    bool stress;
    std::vector<std::promise<ReclaimResult>> requests;
    {
      sync::LockGuard guard(mutex_);
      if (stop_) break;
      stress = stats_.stress;
      requests.swap(pending_);
    }
    if (!requests.empty()) {
      reclaim_all(false, std::move(requests));
      continue;
    }
    // Stress mode polls without sleeping and reclaims every round; otherwise sleep until a
    // request or a pressure event.
    // poll can only fail transiently here (EINTR, ENOMEM); keep serving requests either way.
    if (poll(fds.data(), fds.size(), stress ? 0 : -1) < 0) continue;
    if (fds[0].revents & POLLIN) drain_wakeups();
    bool pressure = false;
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if ((fds[i].revents & fds[i].events) && sources_[i - 1]->consume()) pressure = true;
      // A source that reports an error it did not ask for is dead (a PSI trigger whose cgroup
      // went away): stop polling it rather than spin on it.
      if (fds[i].revents & ~fds[i].events & (POLLERR | POLLHUP | POLLNVAL)) fds[i].fd = -1;
    }
    if (pressure || stress) {
      reclaim_all(pressure, {});
      if (stress) sched_yield();
    }
  }
  // Nobody waits forever on a request that arrived while stopping.
  sync::LockGuard guard(mutex_);
  for (auto& request : pending_) request.set_value(ReclaimResult{});
}

}  // namespace cused::core::alloc
