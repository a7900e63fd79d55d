#include "cused/fuse/uring_requests.h"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string_view>

#include "cused/proc_status.h"
#include "cused/request/failures.h"

namespace cused::fuse {

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

UringRequests::ReplyPass::ReplyPass(UringRequests& requests) : requests_(requests) {
  // Sequentially consistent with close(): either close() sees this reply in progress and waits,
  // or this pass sees the rings closed.
  requests_.replying_.fetch_add(1);
  open_ = !requests_.closed_.load();
  if (!open_) requests_.replying_.fetch_sub(1);
}

UringRequests::ReplyPass::~ReplyPass() {
  if (open_) requests_.replying_.fetch_sub(1);
}

UringRequests::UringRequests() = default;

// The threads start with the first io_uring request: a classic /dev/fuse mount never has one.
void UringRequests::start_threads() {
  std::call_once(started_, [this] {
    watcher_ = std::thread([this] { watch(); });
    replier_ = std::thread([this] { send_replies(); });
  });
}

UringRequests::~UringRequests() {
  {
    sync::LockGuard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (watcher_.joinable()) watcher_.join();
  {
    sync::LockGuard guard(replies_lock_);
    replies_stopping_ = true;
  }
  replies_wake_.notify_one();
  if (replier_.joinable()) replier_.join();
  sync::LockGuard guard(lock_);
  outstanding_.clear();  // unlinks what the frontend did not answer (safe_link hooks)
}

void UringRequests::reply_later(std::function<void()> reply) {
  start_threads();
  {
    sync::LockGuard guard(replies_lock_);
    replies_.push_back(std::move(reply));
  }
  replies_wake_.notify_one();
}

void UringRequests::send_replies() {
  while (std::optional<std::function<void()>> reply = take_reply()) {
    run_guarded(
        RequestEntry::kWorker, "io_uring reply",
        [&] {
          ReplyPass pass(*this);
          if (pass.open()) (*reply)();
        },
        [](int) {});
  }
}

std::optional<std::function<void()>> UringRequests::take_reply() {
  sync::LockGuard guard(replies_lock_);
  while (!replies_stopping_ && replies_.empty()) replies_wake_.wait(replies_lock_);
  if (replies_.empty()) return std::nullopt;  // stopping, everything sent
  auto reply = std::move(replies_.front());
  replies_.pop_front();
  return reply;
}

void UringRequests::track(Request& request) {
  start_threads();
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

void UringRequests::untrack(Request& request) {
  sync::LockGuard guard(lock_);
  if (request.is_linked()) outstanding_.erase(outstanding_.iterator_to(request));
}

void UringRequests::close() {
  closed_.store(true);
  while (replying_.load() != 0) std::this_thread::yield();
}

void UringRequests::watch() {
  while (std::optional<std::vector<pid_t>> due = next_scan()) {
    if (due->empty()) continue;
    run_guarded(
        RequestEntry::kWorker, "io_uring signal scan",
        [&] {
          std::vector<pid_t> hit = signalled(*due);
          sync::LockGuard guard(lock_);
          interrupt_signalled(hit);
        },
        [](int) {});
  }
}

std::optional<std::vector<pid_t>> UringRequests::next_scan() {
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

std::vector<pid_t> UringRequests::signalled(const std::vector<pid_t>& tids) {
  std::vector<pid_t> hit;
  for (pid_t tid : tids)
    if (has_unblocked_signal(tid)) hit.push_back(tid);
  return hit;
}

void UringRequests::interrupt_signalled(const std::vector<pid_t>& tids) {
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

}  // namespace cused::fuse
