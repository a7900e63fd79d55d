// SPDX-License-Identifier: GPL-2.0-only
// What wake_up_interruptible() becomes without sleeping threads. A binder read with no work
// parks its request; whoever queues work for that thread later detaches the parked read under the
// proc's inner lock and hands it to the WakeScope of the daemon thread it runs on. When that
// daemon thread has dropped the engine's locks (the scope ends), it runs the woken reads itself:
// it writes the BR_ stream into the reader's buffer and completes the reader's request. No daemon
// thread ever blocks waiting for binder work, and no other thread is woken to deliver
// (docs/design.md section 3).
#pragma once

#include <sys/types.h>

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "core/completion.h"

namespace cused::core {

class Thread;
struct PendingRead;

// Who runs a woken read: the proc whose thread was woken (core/proc.h). The scope sees it only
// through this, so waking sits below the proc that wakes.
class ReadResumer {
 public:
  virtual void resume_read(const std::shared_ptr<Thread>& thread,
                           std::unique_ptr<PendingRead> read) = 0;

 protected:
  ~ReadResumer() = default;
};

class WakeScope {
 public:
  // `current_tid`: the tid whose request this daemon thread serves (the kernel's `current`).
  explicit WakeScope(pid_t current_tid);
  // The outermost scope delivers everything queued: woken reads first, then the caller's own
  // answer (so a reply reaches the waiting caller before the replier hears its completion).
  // A scope opened inside another is passive.
  ~WakeScope();
  WakeScope(const WakeScope&) = delete;
  WakeScope& operator=(const WakeScope&) = delete;

  // The scope of the calling daemon thread. Engine code that wakes threads runs inside one.
  static WakeScope& current();

  pid_t current_tid() const { return current_tid_; }
  // `resumer` is the thread's proc, which `thread` keeps alive.
  void resume(ReadResumer& resumer, std::shared_ptr<Thread> thread,
              std::unique_ptr<PendingRead> read);
  void notify(std::shared_ptr<PollWaiter> waiter);
  // The request this scope serves, answered after the woken reads ran.
  void answer(std::unique_ptr<Completion> completion, long result, std::span<const std::byte> out);

 private:
  struct Resumption {
    ReadResumer* resumer;
    std::shared_ptr<Thread> thread;
    std::unique_ptr<PendingRead> read;
  };
  struct Answer {
    std::unique_ptr<Completion> completion;
    long result;
    // The ioctl argument copied back: a binder_write_read (48 bytes) or a smaller struct.
    boost::container::small_vector<std::byte, 48> out;
  };
  void drain();

  // A scope lives for one request on a daemon thread's stack; what a request wakes fits inline
  // (a call wakes one reader, a reply answers the woken caller and the replier), so the common
  // request allocates nothing here.
  const pid_t current_tid_;
  WakeScope* const outer_;
  boost::container::small_vector<Resumption, 2> resumptions_;  // FIFO from resumed_
  std::size_t resumed_ = 0;
  boost::container::small_vector<std::shared_ptr<PollWaiter>, 2> waiters_;
  boost::container::small_vector<Answer, 2> answers_;
};

}  // namespace cused::core
