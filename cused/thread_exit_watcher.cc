// SPDX-License-Identifier: GPL-2.0-only
#include "cused/thread_exit_watcher.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "core/proc.h"
#include "core/sync/lock_guard.h"
#include "cused/host/read_small_file.h"
#include "cused/proc_status.h"
#include "cused/request/failures.h"

namespace cused {

namespace {

// <linux/pidfd.h> of Linux >= 6.9: a pidfd of one thread rather than of its thread group.
constexpr unsigned kPidfdThread = 0x80;  // O_EXCL

int pidfd_of_thread(pid_t tid) {
  return static_cast<int>(syscall(SYS_pidfd_open, tid, kPidfdThread));
}

constexpr unsigned kPfExiting = 0x4;  // a task flag in /proc/<pid>/stat (include/linux/sched.h)

bool sigkill_in(std::string_view mask) {  // "0000000000000100": hex, bit n-1 for signal n
  unsigned long long bits = std::strtoull(std::string(mask).c_str(), nullptr, 16);
  return bits & (1ULL << (SIGKILL - 1));
}

// The leader's state is a zombie or dead, or its task flags say it is in do_exit().
bool leader_exiting(pid_t tgid) {
  std::string stat;
  if (host::read_small_file(fmt::format("/proc/{}/stat", tgid), stat) != 0) return true;
  // "pid (comm) S ppid pgrp session tty_nr tpgid flags ...": the comm may hold spaces and
  // parentheses; the last ')' ends it.
  auto comm_end = stat.rfind(')');
  char state = 0;
  unsigned flags = 0;
  if (comm_end == std::string::npos ||
      std::sscanf(stat.c_str() + comm_end + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2)
    return true;
  return state == 'Z' || state == 'X' || (flags & kPfExiting);
}

}  // namespace

// A process that exits as a whole (exit_group, a fatal signal) queues a SIGKILL on every other
// thread, the leader included, before any of them runs again. So when one of its threads is seen
// gone, the leader has SIGKILL pending, is exiting (PF_EXITING), is a zombie, or is gone.
bool process_exiting(pid_t tgid) {
  if (leader_exiting(tgid)) return true;
  bool killed = false;
  bool readable = read_proc_status(tgid, [&](std::string_view name, std::string_view value) {
    if (name == "SigPnd" || name == "ShdPnd") killed = killed || sigkill_in(value);
  });
  return !readable || killed;
}

ThreadExitWatcher::ThreadExitWatcher()
    : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)), stop_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (epoll_fd_ < 0 || stop_fd_ < 0)
    throw std::system_error(errno, std::generic_category(), "thread exit watcher");
  epoll_event stop{};
  stop.events = EPOLLIN;
  stop.data.u64 = 0;  // ids start at 1
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &stop) != 0)
    throw std::system_error(errno, std::generic_category(), "thread exit watcher");
}

ThreadExitWatcher::~ThreadExitWatcher() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto written = write(stop_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  for (auto& [id, entry] : watches_) close(entry.second.pidfd);
  close(stop_fd_);
  close(epoll_fd_);
}

void ThreadExitWatcher::start_thread() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void ThreadExitWatcher::watch(const std::shared_ptr<core::Proc>& proc, pid_t tid) {
  sync::LockGuard guard(lock_);
  Key key{proc.get(), tid};
  if (unsupported_ || ids_.contains(key)) return;
  int pidfd = pidfd_of_thread(tid);
  if (pidfd < 0) {
    if (errno == EINVAL) {  // no PIDFD_THREAD: a kernel older than 6.9
      unsupported_ = true;
      fmt::print(stderr,
                 "cused: this kernel has no thread pidfds (Linux >= 6.9): a binder thread whose "
                 "OS thread exits without BINDER_THREAD_EXIT stays until its proc is released\n");
    }
    return;  // ESRCH: gone already; its ioctl is being served, the next one will see to it
  }
  std::uint64_t id = next_id_++;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = id;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, pidfd, &event) != 0) {
    close(pidfd);
    return;
  }
  ids_.emplace(key, id);
  watches_.emplace(id, std::pair{key, Watch{proc, pidfd}});
  start_thread();
}

void ThreadExitWatcher::forget(const core::Proc* proc) {
  sync::LockGuard guard(lock_);
  for (auto it = ids_.lower_bound({proc, 0}); it != ids_.end() && it->first.first == proc;) {
    auto watch = watches_.find(it->second);
    close(watch->second.second.pidfd);  // also takes it out of the epoll set
    watches_.erase(watch);
    it = ids_.erase(it);
  }
}

std::size_t ThreadExitWatcher::watched() const {
  sync::LockGuard guard(lock_);
  return watches_.size();
}

std::optional<std::pair<pid_t, std::weak_ptr<core::Proc>>> ThreadExitWatcher::take(
    std::uint64_t id) {
  sync::LockGuard guard(lock_);
  auto it = watches_.find(id);
  if (it == watches_.end()) return std::nullopt;  // forgotten meanwhile
  auto [key, watch] = std::move(it->second);
  close(watch.pidfd);
  watches_.erase(it);
  ids_.erase(key);
  return std::pair{key.second, std::move(watch.proc)};
}

void ThreadExitWatcher::run() {
  for (;;) {
    epoll_event events[32];
    int ready = epoll_wait(epoll_fd_, events, 32, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return;
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.u64 == 0) return;  // stopping
      auto exited = take(events[i].data.u64);
      if (!exited) continue;
      run_guarded(
          RequestEntry::kWorker, "thread exit",
          [&] {
            auto proc = exited->second.lock();
            // S2.6, S1.9: a thread that goes with its whole process keeps its binder thread
            // until the proc's release, as on the kernel: released early, its callers would
            // hear BR_DEAD_REPLY while the proc still holds its refs and nodes.
            if (proc && !process_exiting(proc->pid())) proc->thread_exited(exited->first);
          },
          [](int) {});
    }
  }
}

}  // namespace cused
