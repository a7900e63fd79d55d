#include "cused/binderfs/interrupt_worker.h"

#include "core/proc.h"

namespace cused::binderfs {

InterruptWorker::InterruptWorker() : thread_([this] { run(); }) {}

InterruptWorker::~InterruptWorker() {
  {
    std::lock_guard guard(lock_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void InterruptWorker::post(std::weak_ptr<core::Proc> proc, pid_t tid) {
  {
    std::lock_guard guard(lock_);
    queue_.push_back({std::move(proc), tid});
  }
  wake_.notify_one();
}

void InterruptWorker::run() {
  std::unique_lock guard(lock_);
  for (;;) {
    wake_.wait(guard, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left to deliver
    Interrupt next = std::move(queue_.front());
    queue_.pop_front();
    guard.unlock();
    if (auto proc = next.proc.lock()) proc->interrupt(next.tid);
    guard.lock();
  }
}

}  // namespace cused::binderfs
