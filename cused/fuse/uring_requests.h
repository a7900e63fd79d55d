// SPDX-License-Identifier: GPL-2.0-only
// What ioctl requests that arrive over FUSE-over-io_uring need from cused because libfuse 3.18
// does not provide it (docs/binderfs.md, "FUSE over io_uring").
//
// * Interrupts. The kernel sends FUSE_INTERRUPT for an io_uring request over /dev/fuse as for any
//   other, but libfuse only matches interrupts against requests read from /dev/fuse
//   (lib/fuse_lowlevel.c, find_interrupted; "for now no support for interrupts with io-uring"), so
//   the callback of fuse_req_interrupt_func never runs, and a parked binder read that nobody
//   interrupts leaves its caller unkillable (S1.12, S1.9). io_uring requests are therefore
//   tracked by a SignalWatcher (cused/request/signal_watcher.h), which interrupts them as
//   FUSE_INTERRUPT would have.
// * Replies after the loop. libfuse frees the ring buffers (where a reply is written) when its
//   session loop ends; a parked request answered after that (the teardown releases every proc,
//   which completes its parked reads) would write into freed memory. close() waits for replies in
//   progress and drops later ones; the kernel ends those requests when the connection goes.
// * Replies from another thread. Each ring thread holds its queue's lock (libfuse's ring_lock)
//   for a whole batch of requests, handlers included, and a reply to a request of another queue
//   takes that queue's lock (lib/fuse_uring.c, fuse_uring_commit_sqe). A ring thread whose
//   handler wakes a read parked on the other queue while that queue's thread does the reverse
//   deadlocks both (two call pairs on crossed CPUs do it within seconds). So ring threads wait
//   for each other's queue locks in one order only (IoctlCompletion::complete): a ring thread
//   answers its own queue's requests, and another queue's when that queue's ring thread comes
//   later in the order; everything else goes to the reply thread here, which holds no ring lock
//   and no cused lock while it waits for the target queue's.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "core/sync/cond_var.h"
#include "core/sync/mutex.h"
#include "cused/request/signal_watcher.h"

namespace cused::fuse {

class UringRequests {
 public:
  // An outstanding io_uring request, as the signal watcher sees it.
  using Request = SignalWatcher::Request;

  // Held while a reply is written into a ring buffer.
  class ReplyPass {
   public:
    explicit ReplyPass(UringRequests& requests);
    ~ReplyPass();
    ReplyPass(const ReplyPass&) = delete;
    ReplyPass& operator=(const ReplyPass&) = delete;
    // False once the rings are gone: the reply must not be written.
    bool open() const { return open_; }

   private:
    UringRequests& requests_;
    bool open_;
  };

  UringRequests();
  ~UringRequests();
  UringRequests(const UringRequests&) = delete;
  UringRequests& operator=(const UringRequests&) = delete;

  void track(Request& request) { signals_.track(request); }
  // Before the request is answered; harmless if it was never tracked or already interrupted.
  void untrack(Request& request) { signals_.untrack(request); }

  // Runs `reply` (which answers an io_uring request) on the reply thread, inside a ReplyPass;
  // dropped if the rings are closed by then.
  void reply_later(std::function<void()> reply) CUSED_EXCLUDES(replies_lock_);

  // Waits for replies in progress; every later ReplyPass is closed. Call before libfuse frees the
  // rings (before the loop ends), or at the latest right after it ended.
  void close();

 private:
  void start_threads();
  void send_replies() CUSED_EXCLUDES(replies_lock_);
  // The next reply to send, waiting for one; none once stopping and everything sent.
  std::optional<std::function<void()>> take_reply() CUSED_EXCLUDES(replies_lock_);

  std::atomic<unsigned> replying_{0};
  std::atomic<bool> closed_{false};

  SignalWatcher signals_;

  sync::Mutex replies_lock_;
  sync::CondVar replies_wake_;
  std::deque<std::function<void()>> replies_ CUSED_GUARDED_BY(replies_lock_);
  bool replies_stopping_ CUSED_GUARDED_BY(replies_lock_) = false;

  std::once_flag started_;
  std::thread replier_;
};

}  // namespace cused::fuse
