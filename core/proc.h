// One open file description of a binder device (S1.1): its threads, and the ioctl entry points a
// frontend calls. A minimal engine for now: BINDER_VERSION, SET_MAX_THREADS and the read half of
// BINDER_WRITE_READ (BR_NOOP, parking, EINTR, EAGAIN, poll); the protocol engine grows here.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>

#include "core/buffer_file.h"
#include "core/client_mapping.h"
#include "core/completion.h"
#include "core/device.h"
#include "core/sync/mutex.h"

namespace cused::core {

struct IoctlRequest {
  pid_t pid = 0;  // caller's thread group
  pid_t tid = 0;  // caller's thread: binder threads are keyed on it
  uid_t euid = 0;
  unsigned cmd = 0;
  std::span<const std::byte> arg;  // the argument as copied in (restricted ioctl: by value)
  bool nonblock = false;           // O_NONBLOCK on the file (S1.11)
};

inline constexpr unsigned kPollIn = 0x1;   // EPOLLIN
inline constexpr unsigned kPollErr = 0x8;  // EPOLLERR

class Proc {
 public:
  Proc(std::shared_ptr<Device> device, const OpenerIdentity& opener,
       std::unique_ptr<BufferFile> buffers, std::unique_ptr<MappingFinder> mapping);
  ~Proc();

  pid_t pid() const { return pid_; }
  uid_t euid() const { return euid_; }
  BufferFile& buffers() { return *buffers_; }

  void ioctl(const IoctlRequest& request, std::unique_ptr<Completion> completion);
  // The frontend saw an interrupt for `tid`'s outstanding request (after marking it interrupted).
  void interrupt(pid_t tid);
  // S1.10: events for the calling thread; `waiter` is kept and notified when work arrives.
  unsigned poll(pid_t tid, std::unique_ptr<PollWaiter> waiter);
  // S1.8: every close() of an fd: wake readers, who return with BR_NOOP.
  void flush();
  // S1.9: the last reference is gone.
  void release();

 private:
  struct Thread;
  Thread& thread_for(pid_t tid) CUSED_REQUIRES(lock_);
  void write_read(const IoctlRequest& request, std::unique_ptr<Completion> completion);
  void finish_read(Thread& thread, std::unique_ptr<Completion> completion, long error)
      CUSED_REQUIRES(lock_);

  const std::shared_ptr<Device> device_;
  const pid_t pid_;
  const uid_t euid_;
  const std::unique_ptr<BufferFile> buffers_;
  const std::unique_ptr<MappingFinder> mapping_;

  sync::Mutex lock_;  // the proc's inner lock (binder_proc.inner_lock)
  std::map<pid_t, std::unique_ptr<Thread>> threads_ CUSED_GUARDED_BY(lock_);
  std::uint32_t max_threads_ CUSED_GUARDED_BY(lock_) = 0;
  bool released_ CUSED_GUARDED_BY(lock_) = false;
};

}  // namespace cused::core
