// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/shrinker_thread.h"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace cused::host {
namespace {

std::vector<std::string> names_of(const std::vector<std::unique_ptr<PressureSource>>& sources) {
  std::vector<std::string> names;
  for (const auto& source : sources) names.emplace_back(source->name());
  return names;
}

int open_eventfd() {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  return fd;
}

}  // namespace

ShrinkerThread::ShrinkerThread(core::alloc::PageLru& lru, ShrinkerOptions options)
    : sources_(std::move(options.sources)),
      policy_(lru, options.stress, names_of(sources_), std::move(options.unavailable)),
      wake_fd_(open_eventfd()),
      thread_([this] { run(); }) {}

ShrinkerThread::~ShrinkerThread() {
  policy_.stop();
  wake();
  thread_.join();
  close(wake_fd_);
}

core::alloc::ReclaimResult ShrinkerThread::shrink_now() {
  auto done = policy_.request();
  wake();
  return done.get();
}

void ShrinkerThread::set_stress(bool on) {
  policy_.set_stress(on);
  wake();
}

void ShrinkerThread::wake() {
  std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void ShrinkerThread::drain_wakeups() {
  std::uint64_t count;
  [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof count);
}

std::optional<bool> ShrinkerThread::wait_for_pressure(std::vector<pollfd>& fds, bool stress) {
  // Stress mode polls without sleeping; otherwise sleep until a wakeup or a pressure event.
  if (poll(fds.data(), fds.size(), stress ? 0 : -1) < 0) return std::nullopt;
  if (fds[0].revents & POLLIN) drain_wakeups();
  bool pressure = false;
  for (std::size_t i = 1; i < fds.size(); ++i) {
    if ((fds[i].revents & fds[i].events) && sources_[i - 1]->consume()) pressure = true;
    // A source that reports an error it did not ask for is dead (a PSI trigger whose cgroup
    // went away): stop polling it rather than spin on it.
    if (fds[i].revents & ~fds[i].events & (POLLERR | POLLHUP | POLLNVAL)) fds[i].fd = -1;
  }
  return pressure;
}

void ShrinkerThread::run() {
  std::vector<pollfd> fds;
  fds.push_back({wake_fd_, POLLIN, 0});
  for (const auto& source : sources_) fds.push_back({source->fd(), source->events(), 0});
  for (;;) {
    core::alloc::ShrinkerRound round = policy_.take_round();
    if (round.stop) return;
    if (!round.requests.empty()) {
      policy_.reclaim(false, std::move(round.requests));
      continue;
    }
    // poll can only fail transiently here (EINTR, ENOMEM); keep serving requests either way.
    const std::optional<bool> pressure = wait_for_pressure(fds, round.stress);
    if (!pressure) continue;
    if (*pressure || round.stress) {
      policy_.reclaim(*pressure);
      if (round.stress) sched_yield();
    }
  }
}

}  // namespace cused::host
