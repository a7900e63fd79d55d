// SPDX-License-Identifier: GPL-2.0-only
#include "cused/fuse/uring_requests.h"

#include "cused/request/failures.h"

namespace cused::fuse {

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

// The reply thread starts with the first reply it must send: a classic /dev/fuse mount never
// has one (nor does the signal watcher start before an io_uring request is tracked).
void UringRequests::start_threads() {
  std::call_once(started_, [this] { replier_ = std::thread([this] { send_replies(); }); });
}

UringRequests::~UringRequests() {
  {
    sync::LockGuard guard(replies_lock_);
    replies_stopping_ = true;
  }
  replies_wake_.notify_one();
  if (replier_.joinable()) replier_.join();
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

void UringRequests::close() {
  closed_.store(true);
  while (replying_.load() != 0) std::this_thread::yield();
}

}  // namespace cused::fuse
