// SPDX-License-Identifier: GPL-2.0-only
// Interrupts for requests whose caller's signals nobody reports to cused (S1.12). FUSE reports a
// signal to a thread waiting in a FUSE request with FUSE_INTERRUPT, but libfuse drops those for
// requests that came over io_uring; and a `cused run` program waits for the daemon's answer
// killably only (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, docs/run.md), so a non-fatal signal stays
// pending until the daemon answers. A watcher thread therefore looks at the callers of tracked
// requests itself: a request outstanding for a whole scan period whose calling thread has an
// unblocked signal pending is interrupted, as FUSE_INTERRUPT would have it (a parked read ends
// with EINTR).
#pragma once

#include <sys/types.h>

#include <boost/intrusive/list.hpp>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "core/sync/cond_var.h"
#include "core/sync/mutex.h"

namespace cused {

class SignalWatcher {
 public:
  // How long a request may wait before its caller's signals are looked at, and how often after.
  static constexpr std::chrono::milliseconds kScanPeriod{50};

  // A request the watcher looks after.
  class Request : public boost::intrusive::list_base_hook<
                      boost::intrusive::link_mode<boost::intrusive::safe_link>> {
   public:
    virtual ~Request() = default;
    // The thread waiting for the answer.
    virtual pid_t caller_tid() const = 0;
    // What an interrupt of this request runs. Called with the watcher's lock held, so that the
    // request cannot complete (and go away) meanwhile: must not call into core.
    virtual void interrupt() = 0;

   private:
    friend class SignalWatcher;
    bool scanned_ = false;  // outstanding at the last scan; guarded by SignalWatcher::lock_ (a
                            // request cannot name the lock of the object that tracks it)
  };

  SignalWatcher() = default;
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  // The watcher thread starts with the first request tracked.
  void track(Request& request) CUSED_EXCLUDES(lock_);
  // Before the request is answered (waits for a running scan, so the request outlives it);
  // harmless if it was never tracked or already interrupted.
  void untrack(Request& request) CUSED_EXCLUDES(lock_);

 private:
  using List = boost::intrusive::list<Request, boost::intrusive::constant_time_size<false>>;
  void watch() CUSED_EXCLUDES(lock_);
  // Waits for tracked requests, then one scan period; returns the callers of the requests that
  // were outstanding at the previous scan too. None once stopping.
  std::optional<std::vector<pid_t>> next_scan() CUSED_EXCLUDES(lock_);
  // The tids among `tids` that have an unblocked signal pending.
  static std::vector<pid_t> signalled(const std::vector<pid_t>& tids);
  void interrupt_signalled(const std::vector<pid_t>& tids) CUSED_REQUIRES(lock_);

  sync::Mutex lock_;
  sync::CondVar wake_;
  List outstanding_ CUSED_GUARDED_BY(lock_);
  bool idle_ CUSED_GUARDED_BY(lock_) = false;  // the watcher waits for a first request
  bool stopping_ CUSED_GUARDED_BY(lock_) = false;
  std::once_flag started_;
  std::thread watcher_;
};

// True if thread `tid` has a signal pending that it does not block (/proc/TID/status): the state
// in which the kernel stops waiting interruptibly for a FUSE answer and sends FUSE_INTERRUPT.
bool has_unblocked_signal(pid_t tid);

}  // namespace cused
