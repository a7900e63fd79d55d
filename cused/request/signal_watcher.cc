// SPDX-License-Identifier: GPL-2.0-only
#include "cused/request/signal_watcher.h"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>

#include "cused/proc_status.h"
#include "cused/request/failures.h"

namespace cused {

namespace {

// The bit of `signal` in a /proc/PID/status signal mask.
constexpr std::uint64_t mask_of(int signal) { return std::uint64_t{1} << (signal - 1); }

}  // namespace

bool has_unblocked_signal(pid_t tid) {
  std::uint64_t pending = 0, blocked = 0;
  read_proc_status(tid, [&](std::string_view name, std::string_view value) {
    std::uint64_t mask = 0;
    if (name != "SigPnd" && name != "ShdPnd" && name != "SigBlk") return;
    std::from_chars(value.data(), value.data() + value.size(), mask, 16);
    (name == "SigBlk" ? blocked : pending) |= mask;
  });
  // SIGKILL cannot be blocked; the kernel marks it pending on every thread of a killed process.
  return (pending & (~blocked | mask_of(SIGKILL))) != 0;
}

SignalWatcher::~SignalWatcher() {
  {
    sync::LockGuard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (watcher_.joinable()) watcher_.join();
  sync::LockGuard guard(lock_);
  outstanding_.clear();  // unlinks what the frontend did not answer (safe_link hooks)
}

void SignalWatcher::track(Request& request) {
  std::call_once(started_, [this] { watcher_ = std::thread([this] { watch(); }); });
  bool watcher_idle;
  {
    sync::LockGuard guard(lock_);
    watcher_idle = idle_;
    request.scanned_ = false;
    outstanding_.push_back(request);
  }
  // Only an idle watcher needs waking; one that scans comes round by itself (no wake-up per
  // request on the hot path).
  if (watcher_idle) wake_.notify_one();
}

void SignalWatcher::untrack(Request& request) {
  sync::LockGuard guard(lock_);
  if (request.is_linked()) outstanding_.erase(outstanding_.iterator_to(request));
}

void SignalWatcher::watch() {
  while (std::optional<std::vector<pid_t>> due = next_scan()) {
    if (due->empty()) continue;
    run_guarded(
        RequestEntry::kWorker, "signal scan",
        [&] {
          std::vector<pid_t> hit = signalled(*due);
          sync::LockGuard guard(lock_);
          interrupt_signalled(hit);
        },
        [](int) {});
  }
}

std::optional<std::vector<pid_t>> SignalWatcher::next_scan() {
  sync::LockGuard guard(lock_);
  idle_ = true;
  while (!stopping_ && outstanding_.empty()) wake_.wait(lock_);
  idle_ = false;
  auto deadline = std::chrono::steady_clock::now() + kScanPeriod;
  while (!stopping_ && wake_.wait_until(lock_, deadline)) {
  }
  if (stopping_) return std::nullopt;
  // Requests seen at the previous scan have waited a whole period: look at their callers.
  std::vector<pid_t> due;
  for (auto& request : outstanding_) {
    if (request.scanned_) due.push_back(request.caller_tid());
    request.scanned_ = true;
  }
  return due;
}

std::vector<pid_t> SignalWatcher::signalled(const std::vector<pid_t>& tids) {
  std::vector<pid_t> hit;
  for (pid_t tid : tids)
    if (has_unblocked_signal(tid)) hit.push_back(tid);
  return hit;
}

void SignalWatcher::interrupt_signalled(const std::vector<pid_t>& tids) {
  if (tids.empty()) return;
  for (auto it = outstanding_.begin(); it != outstanding_.end();) {
    Request& request = *it;
    if (!request.scanned_ ||
        std::find(tids.begin(), tids.end(), request.caller_tid()) == tids.end()) {
      ++it;
      continue;
    }
    it = outstanding_.erase(it);  // interrupted once, as by one FUSE_INTERRUPT
    request.interrupt();
  }
}

}  // namespace cused
