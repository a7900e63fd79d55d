// SPDX-License-Identifier: GPL-2.0-only
#include "core/thread.h"

#include <cerrno>

namespace cused::core {

void PendingRead::put(const void* data, std::size_t len) {
  const auto* bytes = static_cast<const std::byte*>(data);
  out.insert(out.end(), bytes, bytes + len);
  pos += len;
}

int PendingRead::flush() {
  if (out.empty()) return 0;
  binder_write_read ending = bwr;
  ending.read_consumed = out_start + out.size();
  if (completion->write_read_buffer(bwr.read_buffer + out_start, {out.data(), out.size()},
                                    std::as_bytes(std::span(&ending, 1))))
    return -EFAULT;
  out_start += out.size();
  out.clear();
  return 0;
}

void PendingRead::reset() {
  completion.reset();
  bwr = {};
  nonblock = false;
  pos = out_start = 0;
  resumed = false;
  out.clear();
}

std::shared_ptr<void> ErrorWork::owner() { return thread.shared_from_this(); }

Thread::Thread(std::shared_ptr<Proc> proc, InnerLock& inner_lock, pid_t tid)
    : proc(std::move(proc)), inner_lock(inner_lock), tid(tid) {}

Thread::~Thread() = default;

void Thread::enqueue_work(Work& work) {
  todo.push_back(work);
  process_todo = true;
}

void Thread::enqueue_deferred_work(Work& work) { todo.push_back(work); }

}  // namespace cused::core
