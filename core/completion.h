// SPDX-License-Identifier: GPL-2.0-only
// The answer to one ioctl. core completes it at once, or keeps it (a parked binder read) and
// completes it later from whichever daemon thread delivers work; it never blocks a daemon thread
// waiting for binder work (docs/design.md section 1).
#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "core/passed_files.h"
#include "core/user_memory.h"

namespace cused::core {

class Completion {
 public:
  virtual ~Completion() = default;

  // result >= 0: the ioctl's return value; result < 0: -errno. `out` is the ioctl argument as
  // copied back to the caller (for BINDER_WRITE_READ the updated binder_write_read, which the
  // kernel copies back even when it fails with EINTR or EAGAIN, S1.11/S1.12).
  virtual void complete(long result, std::span<const std::byte> out) = 0;

  // The caller's memory, valid for as long as this completion lives (a parked read writes into
  // the caller's read buffer when work arrives, from another daemon thread).
  virtual UserMemory& user_memory() = 0;

  // The read half's output: `data` into the caller's read buffer at `addr`. `argument` is what
  // complete() copies back should the read end now without error (the binder_write_read with this
  // output consumed): a frontend that copies the argument back with a system call of its own may
  // write both in one, in the kernel's order (the buffer, then the argument), and skip the
  // argument in complete() when it is still the same. 0, or -EFAULT when `data` could not be
  // written (what happens to `argument` then is complete()'s to repair).
  virtual int write_read_buffer(std::uint64_t addr, std::span<const std::byte> data,
                                std::span<const std::byte> argument) {
    (void)argument;
    return user_memory().write(addr, data.data(), data.size());
  }

  // The caller's file table, where the frontend can reach it (core/passed_files.h); null: this
  // caller can neither send nor receive fds.
  virtual CallerFiles* caller_files() { return nullptr; }

  // True once the caller has stopped waiting for this request by itself (a signal ended a
  // seccomp notification, which the kernel then abandons): a parked read whose caller has gone
  // is ended as interrupted, and work is not handed to it.
  virtual bool abandoned() const { return false; }

  // Set by the frontend when the request is interrupted (a signal, S1.12) before it calls
  // Proc::interrupt; core checks it before parking so that an early interrupt is never lost.
  bool interrupted() const { return interrupted_.load(std::memory_order_acquire); }
  void mark_interrupted() { interrupted_.store(true, std::memory_order_release); }

 private:
  std::atomic<bool> interrupted_{false};
};

// Wakes one poll() waiter (S1.10): the frontend's FUSE poll handle.
class PollWaiter {
 public:
  virtual ~PollWaiter() = default;
  virtual void notify() = 0;
};

}  // namespace cused::core
