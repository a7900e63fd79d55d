// core::Completion and core::PollWaiter over libfuse requests.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>

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
  // `copy_out_to`: the caller's argument address of an unrestricted ioctl (CUSE); the answer's
  // argument is written there before the reply, which then carries no data. Without it the
  // argument goes back in the reply (restricted FUSE ioctl).
  IoctlCompletion(fuse_req_t req, pid_t tid, std::size_t out_size, std::weak_ptr<core::Proc> proc,
                  InterruptWorker& interrupts, std::optional<std::uint64_t> copy_out_to = {})
      : req_(req),
        out_size_(out_size),
        copy_out_to_(copy_out_to),
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
  std::optional<std::uint64_t> copy_out_to_;
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
