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

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace cused::core {
class Proc;
}

namespace cused::binderfs {

class InterruptWorker {
 public:
  InterruptWorker();
  ~InterruptWorker();
  InterruptWorker(const InterruptWorker&) = delete;
  InterruptWorker& operator=(const InterruptWorker&) = delete;

  void post(std::weak_ptr<core::Proc> proc, pid_t tid);

 private:
  struct Interrupt {
    std::weak_ptr<core::Proc> proc;
    pid_t tid;
  };
  void run();

  std::mutex lock_;
  std::condition_variable wake_;
  std::deque<Interrupt> queue_;  // guarded by lock_
  bool stopping_ = false;        // guarded by lock_
  std::thread thread_;
};

}  // namespace cused::binderfs
