// SPDX-License-Identifier: GPL-2.0-only
// core::Completion and core::PollWaiter over libfuse requests.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "core/completion.h"
#include "core/proc.h"
#include "cused/fuse/fuse.h"
#include "cused/fuse/request.h"
#include "cused/fuse/uring_requests.h"
#include "cused/process_memory.h"
#include "cused/request/interrupt_worker.h"

namespace cused::fuse {

// The answer to one ioctl request. It owns the request until complete() replies to it, from
// whichever daemon thread core calls it on.
class IoctlCompletion final : public core::Completion, public UringRequests::Request {
 public:
  // `copy_out_to`: the caller's argument address of an unrestricted ioctl (CUSE); the answer's
  // argument is written there before the reply, which then carries no data. Without it the
  // argument goes back in the reply (restricted FUSE ioctl).
  // `copy_out_errno`: what a failed copy-out answers (core/ioctl_argument.h).
  IoctlCompletion(fuse_req_t req, pid_t tid, std::size_t out_size, std::weak_ptr<core::Proc> proc,
                  InterruptWorker& interrupts, std::optional<std::uint64_t> copy_out_to = {},
                  int copy_out_errno = EFAULT)
      : req_(req),
        out_size_(out_size),
        copy_out_to_(copy_out_to),
        copy_out_errno_(copy_out_errno),
        memory_(tid),
        tid_(tid),
        proc_(std::move(proc)),
        interrupts_(interrupts) {
    fuse::RequestScope::mark_answered(req);  // answered from now on by this completion
  }
  ~IoctlCompletion() override;

  // Registers for FUSE INTERRUPT; an interrupt that already arrived is seen at once. A request
  // that came over io_uring passes `uring`: libfuse reports no interrupt for it, so `uring`
  // watches its caller's signals instead, and gates its reply on the rings being alive.
  void watch_interrupts(UringRequests* uring = nullptr);
  void complete(long result, std::span<const std::byte> out) override;
  core::UserMemory& user_memory() override { return memory_; }

  // UringRequests::Request
  pid_t caller_tid() const override { return tid_; }
  void interrupt() override;

 private:
  static void on_interrupt(fuse_req_t req, void* self);
  void reply(fuse_req_t req, long result, std::span<const std::byte> out);
  // The reply's result and argument size after the CUSE copy-out (if any).
  std::pair<long, std::size_t> copy_out(long result, std::span<const std::byte> out);

  fuse_req_t req_;  // nullptr once replied
  std::size_t out_size_;
  std::optional<std::uint64_t> copy_out_to_;
  int copy_out_errno_;
  ProcessMemory memory_;
  pid_t tid_;
  std::weak_ptr<core::Proc> proc_;
  InterruptWorker& interrupts_;
  UringRequests* uring_ = nullptr;
  pthread_t receiver_{};  // the ring thread that received an io_uring request
};

// fuse_reply_err, or fuse_reply_ioctl with the argument (restricted FUSE ioctl).
void send_ioctl_reply(fuse_req_t req, long result, std::span<const std::byte> out);

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

// FUSE_POLL on a binder node, for both frontends: registers `handle` (if any) as the proc's poll
// waiter for thread `tid` and replies with what the proc has ready (S2.12).
void reply_proc_poll(fuse_req_t req, core::Proc& proc, pid_t tid, fuse_pollhandle* handle);

}  // namespace cused::fuse
