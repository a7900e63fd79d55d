// SPDX-License-Identifier: GPL-2.0-only
#include "cused/request/interrupt_worker.h"

#include "core/proc.h"
#include "cused/request/failures.h"

namespace cused {

InterruptWorker::InterruptWorker() : thread_([this] { run(); }) {}

InterruptWorker::~InterruptWorker() {
  {
    sync::LockGuard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void InterruptWorker::post(std::weak_ptr<core::Proc> proc, pid_t tid) {
  {
    sync::LockGuard guard(lock_);
    queue_.push_back({std::move(proc), tid});
  }
  wake_.notify_one();
}

void InterruptWorker::run() {
  while (std::optional<Interrupt> next = take()) {
    run_guarded(
        RequestEntry::kWorker, "interrupt",
        [&] {
          if (auto proc = next->proc.lock()) proc->interrupt(next->tid);  // S1.12
        },
        [](int) {});
  }
}

std::optional<InterruptWorker::Interrupt> InterruptWorker::take() {
  sync::LockGuard guard(lock_);
  while (!stopping_ && queue_.empty()) wake_.wait(lock_);
  if (queue_.empty()) return std::nullopt;
  Interrupt next = std::move(queue_.front());
  queue_.pop_front();
  return next;
}

}  // namespace cused
