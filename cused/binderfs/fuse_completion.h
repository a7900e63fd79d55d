// core::Completion and core::PollWaiter over libfuse requests.
#pragma once

#include <sys/types.h>

#include <memory>

#include "core/completion.h"
#include "core/proc.h"
#include "cused/binderfs/fuse.h"
#include "cused/binderfs/interrupt_worker.h"
#include "cused/process_memory.h"

namespace cused::binderfs {

// The answer to one ioctl request. It owns the request until complete() replies to it, from
// whichever daemon thread core calls it on.
class IoctlCompletion final : public core::Completion {
 public:
  IoctlCompletion(fuse_req_t req, pid_t tid, std::size_t out_size, std::weak_ptr<core::Proc> proc,
                  InterruptWorker& interrupts)
      : req_(req),
        out_size_(out_size),
        memory_(tid),
        tid_(tid),
        proc_(std::move(proc)),
        interrupts_(interrupts) {}
  ~IoctlCompletion() override;

  // Registers for FUSE INTERRUPT; an interrupt that already arrived is seen at once.
  void watch_interrupts();
  void complete(long result, std::span<const std::byte> out) override;
  core::UserMemory& user_memory() override { return memory_; }

 private:
  static void on_interrupt(fuse_req_t req, void* self);

  fuse_req_t req_;  // nullptr once replied
  std::size_t out_size_;
  ProcessMemory memory_;
  pid_t tid_;
  std::weak_ptr<core::Proc> proc_;
  InterruptWorker& interrupts_;
};

class FusePollWaiter final : public core::PollWaiter {
 public:
  explicit FusePollWaiter(fuse_pollhandle* handle) : handle_(handle) {}
  ~FusePollWaiter() override { fuse_pollhandle_destroy(handle_); }
  FusePollWaiter(const FusePollWaiter&) = delete;
  FusePollWaiter& operator=(const FusePollWaiter&) = delete;
  void notify() override { fuse_lowlevel_notify_poll(handle_); }

 private:
  fuse_pollhandle* handle_;
};

}  // namespace cused::binderfs
