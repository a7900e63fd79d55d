// What ioctl requests that arrive over FUSE-over-io_uring need from cused because libfuse 3.18
// does not provide it (docs/binderfs.md, "FUSE over io_uring").
//
// * Interrupts. The kernel sends FUSE_INTERRUPT for an io_uring request over /dev/fuse as for any
//   other, but libfuse only matches interrupts against requests read from /dev/fuse
//   (lib/fuse_lowlevel.c, find_interrupted; "for now no support for interrupts with io-uring"), so
//   the callback of fuse_req_interrupt_func never runs. After a signal the kernel still waits for
//   the answer (uninterruptibly once the signal is fatal), so a parked binder read that nobody
//   interrupts leaves its caller unkillable (S1.12, S1.9). A watcher thread therefore looks at the
//   callers of outstanding io_uring requests itself: a request outstanding for a whole scan
//   period whose calling thread has an unblocked signal pending is interrupted as FUSE_INTERRUPT
//   would have (S1.12: the parked read ends with EINTR).
// * Replies after the loop. libfuse frees the ring buffers (where a reply is written) when its
//   session loop ends; a parked request answered after that (the teardown releases every proc,
//   which completes its parked reads) would write into freed memory. close() waits for replies in
//   progress and drops later ones; the kernel ends those requests when the connection goes.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <boost/intrusive/list.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cused::binderfs {

class UringRequests {
 public:
  // How long a request may wait before its caller's signals are looked at, and how often after.
  static constexpr std::chrono::milliseconds kScanPeriod{50};

  // An outstanding io_uring request, as the watcher sees it.
  class Request : public boost::intrusive::list_base_hook<
                      boost::intrusive::link_mode<boost::intrusive::safe_link>> {
   public:
    virtual ~Request() = default;
    // The calling thread (FUSE's request pid).
    virtual pid_t caller_tid() const = 0;
    // Runs what a FUSE_INTERRUPT for this request would run. Called with the watcher's lock
    // held, so that the request cannot complete (and go away) meanwhile: must not call into core.
    virtual void interrupt() = 0;

   private:
    friend class UringRequests;
    bool scanned_ = false;  // outstanding at the last scan; guarded by UringRequests::lock_
  };

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

  void track(Request& request);
  // Before the request is answered; harmless if it was never tracked or already interrupted.
  void untrack(Request& request);

  // Waits for replies in progress; every later ReplyPass is closed. Call before libfuse frees the
  // rings (before the loop ends), or at the latest right after it ended.
  void close();

 private:
  using List = boost::intrusive::list<Request, boost::intrusive::constant_time_size<false>>;
  void run();
  // The tids among `tids` that have an unblocked signal pending.
  static std::vector<pid_t> signalled(const std::vector<pid_t>& tids);
  void interrupt_signalled(const std::vector<pid_t>& tids);

  std::atomic<unsigned> replying_{0};
  std::atomic<bool> closed_{false};

  std::mutex lock_;
  std::condition_variable wake_;
  List outstanding_;       // guarded by lock_
  bool idle_ = false;      // the watcher waits for a first request; guarded by lock_
  bool stopping_ = false;  // guarded by lock_
  std::thread watcher_;
};

// True if thread `tid` has a signal pending that it does not block (/proc/TID/status), the state
// in which the kernel stops waiting interruptibly for a FUSE answer and sends FUSE_INTERRUPT.
bool has_unblocked_signal(pid_t tid);

}  // namespace cused::binderfs
