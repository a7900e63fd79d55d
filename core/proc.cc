#include "core/proc.h"

#include <cerrno>
#include <cstring>

#include "uapi/binder.h"

namespace cused::core {

struct Proc::Thread {
  // S2.0: set for a new thread and by flush (S1.8); cleared at the end of every ioctl.
  bool need_return = true;
  // A read that found no work: completed when work arrives, on flush, interrupt or release.
  std::unique_ptr<Completion> parked;
  binder_write_read parked_bwr{};
  std::unique_ptr<PollWaiter> poll_waiter;
};

namespace {

template <typename T>
std::span<const std::byte> as_bytes_of(const T& value) {
  return std::as_bytes(std::span<const T, 1>(&value, 1));
}

template <typename T>
bool read_arg(std::span<const std::byte> arg, T& out) {
  if (arg.size() < sizeof(T)) return false;
  std::memcpy(&out, arg.data(), sizeof(T));
  return true;
}

}  // namespace

Proc::Proc(std::shared_ptr<Device> device, const OpenerIdentity& opener,
           std::unique_ptr<BufferFile> buffers, std::unique_ptr<MappingFinder> mapping)
    : device_(std::move(device)),
      pid_(opener.pid),
      euid_(opener.euid),
      buffers_(std::move(buffers)),
      mapping_(std::move(mapping)) {}

Proc::~Proc() { release(); }

Proc::Thread& Proc::thread_for(pid_t tid) {
  auto& slot = threads_[tid];
  if (!slot) slot = std::make_unique<Thread>();
  return *slot;
}

void Proc::ioctl(const IoctlRequest& request, std::unique_ptr<Completion> completion) {
  // S1.3: the fd is usable only by the opener's thread group (the Rust driver's rule).
  if (request.pid != pid_) return completion->complete(-EINVAL, {});
  switch (request.cmd) {
    case BINDER_VERSION: {
      binder_version version{static_cast<__s32>(uapi::kProtocolVersion)};
      sync::LockGuard guard(lock_);
      thread_for(request.tid).need_return = false;
      return completion->complete(0, as_bytes_of(version));
    }
    case BINDER_SET_MAX_THREADS: {
      std::uint32_t max = 0;
      if (!read_arg(request.arg, max)) return completion->complete(-EINVAL, {});  // S2.2
      sync::LockGuard guard(lock_);
      max_threads_ = max;
      thread_for(request.tid).need_return = false;
      return completion->complete(0, {});
    }
    case BINDER_WRITE_READ:
      return write_read(request, std::move(completion));
    default:  // S2.0: unknown codes, SET_IDLE_* included
      return completion->complete(-EINVAL, {});
  }
}

void Proc::write_read(const IoctlRequest& request, std::unique_ptr<Completion> completion) {
  binder_write_read bwr{};
  if (!read_arg(request.arg, bwr)) return completion->complete(-EFAULT, {});
  if (bwr.write_size > 0) {
    // No BC_ command is served yet: the first one is refused as an unknown command would be,
    // with write_consumed left at it (S3.1).
    bwr.read_consumed = 0;
    return completion->complete(-EINVAL, as_bytes_of(bwr));
  }
  if (bwr.read_size == 0) return completion->complete(0, as_bytes_of(bwr));

  sync::LockGuard guard(lock_);
  Thread& thread = thread_for(request.tid);
  if (thread.need_return || released_) {
    thread.need_return = false;
    thread.parked_bwr = bwr;
    return finish_read(thread, std::move(completion), 0);
  }
  if (request.nonblock) {  // S1.11: EAGAIN, read_consumed unchanged
    return completion->complete(-EAGAIN, as_bytes_of(bwr));
  }
  if (completion->interrupted()) return completion->complete(-EINTR, as_bytes_of(bwr));
  thread.parked_bwr = bwr;
  thread.parked = std::move(completion);
}

// Ends a read with only BR_NOOP in the buffer (S3.2: BR_NOOP leads every read at offset 0).
void Proc::finish_read(Thread& thread, std::unique_ptr<Completion> completion, long error) {
  binder_write_read& bwr = thread.parked_bwr;
  if (error == 0 && bwr.read_consumed == 0) {
    std::uint32_t noop = BR_NOOP;
    if (completion->user_memory().write(bwr.read_buffer, &noop, sizeof noop) != 0)
      error = -EFAULT;
    else
      bwr.read_consumed = sizeof noop;
  }
  thread.need_return = false;
  completion->complete(error, as_bytes_of(bwr));
}

void Proc::interrupt(pid_t tid) {
  sync::LockGuard guard(lock_);
  auto it = threads_.find(tid);
  if (it == threads_.end() || !it->second->parked) return;
  Thread& thread = *it->second;
  if (!thread.parked->interrupted()) return;
  auto completion = std::move(thread.parked);
  completion->complete(-EINTR, as_bytes_of(thread.parked_bwr));  // S1.12
}

unsigned Proc::poll(pid_t tid, std::unique_ptr<PollWaiter> waiter) {
  sync::LockGuard guard(lock_);
  Thread& thread = thread_for(tid);
  thread.poll_waiter = std::move(waiter);
  return thread.need_return ? kPollIn : 0;  // S1.10: a new thread polls readable at once
}

void Proc::flush() {
  sync::LockGuard guard(lock_);
  for (auto& [tid, thread] : threads_) {
    thread->need_return = true;  // S1.8
    if (thread->parked) finish_read(*thread, std::move(thread->parked), 0);
    if (thread->poll_waiter) thread->poll_waiter->notify();
  }
}

void Proc::release() {
  sync::LockGuard guard(lock_);
  if (released_) return;
  released_ = true;
  for (auto& [tid, thread] : threads_) {
    if (thread->parked) finish_read(*thread, std::move(thread->parked), 0);
  }
  threads_.clear();
}

}  // namespace cused::core
