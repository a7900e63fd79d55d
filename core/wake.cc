// SPDX-License-Identifier: GPL-2.0-only
#include "core/wake.h"

#include <cassert>
#include <utility>

#include "core/thread.h"
#include "core/trace_events.h"

namespace cused::core {
namespace {

thread_local WakeScope* current_scope = nullptr;

}  // namespace

// A scope opened inside another (an entry point reached from a completion callback) stays
// passive: everything goes to the outermost scope, which delivers once all locks are dropped.
WakeScope::WakeScope(pid_t current_tid) : current_tid_(current_tid), outer_(current_scope) {
  if (!outer_) current_scope = this;
}

WakeScope::~WakeScope() {
  if (outer_) return;
  drain();
  current_scope = nullptr;
}

WakeScope& WakeScope::current() {
  assert(current_scope && "engine code that wakes threads must run inside a WakeScope");
  return *current_scope;
}

void WakeScope::resume(ReadResumer& resumer, std::shared_ptr<Thread> thread,
                       std::unique_ptr<PendingRead> read) {
  resumptions_.push_back({&resumer, std::move(thread), std::move(read)});
}

void WakeScope::notify(std::shared_ptr<PollWaiter> waiter) {
  waiters_.push_back(std::move(waiter));
}

void WakeScope::answer(std::unique_ptr<Completion> completion, long result,
                       std::span<const std::byte> out) {
  // Every answer ends one ioctl (binder_ioctl's exit), for the task it was made by.
  trace::emit(TraceEventType::kIoctlDone, result);
  Answer& answer = answers_.emplace_back();
  answer.completion = std::move(completion);
  answer.result = result;
  answer.out.assign(out.begin(), out.end());
}

void WakeScope::drain() {
  // Running a woken read may wake more threads (it can fail a transaction back to its sender);
  // they land in this scope and are delivered in the same loop.
  for (;;) {
    if (resumed_ < resumptions_.size()) {
      Resumption next = std::move(resumptions_[resumed_++]);
      if (resumed_ == resumptions_.size()) {
        resumptions_.clear();
        resumed_ = 0;
      }
      next.resumer->resume_read(next.thread, std::move(next.read));
      continue;
    }
    if (!waiters_.empty()) {
      auto waiters = std::move(waiters_);
      waiters_.clear();
      for (auto& waiter : waiters) waiter->notify();
      continue;
    }
    if (!answers_.empty()) {
      auto answers = std::move(answers_);
      answers_.clear();
      for (auto& a : answers) a.completion->complete(a.result, {a.out.data(), a.out.size()});
      continue;
    }
    return;
  }
}

}  // namespace cused::core
