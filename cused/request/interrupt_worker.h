// SPDX-License-Identifier: GPL-2.0-only
// Delivers FUSE interrupts to core on a thread of its own.
//
// libfuse runs an interrupt callback while holding the interrupted request's lock, and replying to
// that request (which core does under its proc lock) takes the same request lock. Calling into
// core from the callback would therefore invert the lock order (request -> proc vs proc ->
// request). The callback only marks the completion and queues (proc, tid); this worker then asks
// core to end that thread's parked read with EINTR (S1.12). Interrupts are rare; the hot path
// never touches this thread.
#pragma once

#include <sys/types.h>

#include <deque>
#include <memory>
#include <optional>
#include <thread>

#include "core/sync/cond_var.h"
#include "core/sync/mutex.h"

namespace cused::core {
class Proc;
}

namespace cused {

class InterruptWorker {
 public:
  InterruptWorker();
  ~InterruptWorker();
  InterruptWorker(const InterruptWorker&) = delete;
  InterruptWorker& operator=(const InterruptWorker&) = delete;

  void post(std::weak_ptr<core::Proc> proc, pid_t tid) CUSED_EXCLUDES(lock_);

 private:
  struct Interrupt {
    std::weak_ptr<core::Proc> proc;
    pid_t tid;
  };
  void run() CUSED_EXCLUDES(lock_);
  // The next interrupt to deliver, waiting for one; none once stopping and everything delivered.
  std::optional<Interrupt> take() CUSED_EXCLUDES(lock_);

  sync::Mutex lock_;
  sync::CondVar wake_;
  std::deque<Interrupt> queue_ CUSED_GUARDED_BY(lock_);
  bool stopping_ CUSED_GUARDED_BY(lock_) = false;
  std::thread thread_;
};

}  // namespace cused
