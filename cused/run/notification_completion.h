// SPDX-License-Identifier: GPL-2.0-only
// The answer to one notified ioctl of a `cused run` program (core::Completion): core completes it
// at once or keeps it (a parked read) and completes it later from whichever daemon thread
// delivers work. complete() writes back what binder_ioctl writes back (core/ioctl_argument.h),
// then answers the notification: the program's ioctl returns, as from the kernel's driver.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>

#include "core/completion.h"
#include "core/ioctl_argument.h"
#include "core/proc.h"
#include "cused/process_memory.h"
#include "cused/request/signal_watcher.h"
#include "cused/run/caller_files.h"
#include "cused/run/session.h"
#include "uapi/binder.h"

namespace cused::run {

class NotificationCompletion final : public core::Completion, public SignalWatcher::Request {
 public:
  NotificationCompletion(std::shared_ptr<Session> session, std::uint64_t id, pid_t tid, pid_t tgid,
                         std::uint64_t arg, core::IoctlArgument argument,
                         std::weak_ptr<core::Proc> proc);
  // A request core dropped unanswered (a bug) fails with EIO instead of hanging its caller.
  ~NotificationCompletion() override;
  NotificationCompletion(const NotificationCompletion&) = delete;
  NotificationCompletion& operator=(const NotificationCompletion&) = delete;

  void complete(long result, std::span<const std::byte> out) override;
  core::UserMemory& user_memory() override { return memory_; }
  // The read buffer and the argument it would end with in one process_vm_writev.
  int write_read_buffer(std::uint64_t addr, std::span<const std::byte> data,
                        std::span<const std::byte> argument) override;
  core::CallerFiles* caller_files() override { return &files_; }
  // Only a fatal signal ends the program's wait (WAIT_KILLABLE_RECV), so this is its death.
  bool abandoned() const override { return !still_waiting(); }

  // SignalWatcher::Request: a signal to the waiting thread (S1.12).
  pid_t caller_tid() const override { return tid_; }
  void interrupt() override;

 private:
  // Whether the notification still waits for its answer: then its tid names the caller. Asked
  // of the kernel at most once a millisecond: a pid is reused only after the whole pid space has
  // been handed out since (pid_max new tasks), which takes far longer.
  bool still_waiting() const;

  // copy_to_user into a process that is still the one that called.
  class CallerMemory final : public core::UserMemory {
   public:
    CallerMemory(NotificationCompletion& completion, pid_t tid)
        : completion_(completion), memory_(tid) {}
    int read(std::uint64_t addr, void* dst, std::size_t len) override {
      return memory_.read(addr, dst, len);
    }
    int write(std::uint64_t addr, const void* src, std::size_t len) override;
    std::size_t read_ranges(std::span<const core::UserRange> ranges) override {
      return memory_.read_ranges(ranges);
    }
    std::size_t write_ranges(std::span<const core::UserWriteRange> ranges) override;

   private:
    NotificationCompletion& completion_;
    ProcessMemory memory_;
  };

  std::shared_ptr<Session> session_;
  std::uint64_t id_;
  pid_t tid_;
  std::uint64_t arg_;
  core::IoctlArgument argument_;
  std::weak_ptr<core::Proc> proc_;
  CallerMemory memory_;
  CallerFiles files_;
  bool answered_ = false;
  // The argument write_read_buffer() already wrote back, while nothing has been written since:
  // complete() need not write it again if it is the same.
  std::array<std::byte, sizeof(binder_write_read)> written_argument_;
  std::size_t written_argument_size_ = 0;
  // When the kernel last said the notification waits (the receiving thread checked just before
  // it made this completion).
  mutable std::chrono::steady_clock::time_point waiting_at_ = std::chrono::steady_clock::now();
};

}  // namespace cused::run
