// SPDX-License-Identifier: GPL-2.0-only
#include "cused/fuse/ioctl_completion.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <type_traits>
#include <utility>
#include <vector>

#include "cused/fuse/request.h"

namespace cused::fuse {

namespace {

// Set on the ring threads of FUSE over io_uring, which hold their queue's lock while they run
// handlers (uring_requests.h).
thread_local bool on_ring_thread = false;

// Whether this thread may answer a request of the queue whose ring thread is `receiver` itself.
// Its own queue: libfuse takes no lock. Another queue: only a ring thread ordered before
// `receiver` may wait for that queue's lock, so ring threads wait for each other in one order
// and never in a cycle. Other threads (interrupts, timers) leave it to the reply thread: they
// may hold engine locks that a ring thread's handler waits for.
bool may_wait_for_queue_of(pthread_t receiver) {
  static_assert(std::is_integral_v<pthread_t>, "ring threads are ordered by their pthread_t");
  pthread_t self = pthread_self();
  return pthread_equal(self, receiver) || (on_ring_thread && self < receiver);
}

}  // namespace

IoctlCompletion::~IoctlCompletion() {
  // core must answer every request; if one is dropped unanswered (a bug), the caller gets EIO
  // instead of hanging forever.
  if (req_) complete(-EIO, {});
}

void IoctlCompletion::watch_interrupts(UringRequests* uring) {
  uring_ = uring;
  receiver_ = pthread_self();
  if (uring_) {
    on_ring_thread = true;  // io_uring requests are handled on their queue's ring thread
    uring_->track(*this);
  } else
    fuse_req_interrupt_func(req_, &on_interrupt, this);
}

void IoctlCompletion::on_interrupt(fuse_req_t, void* self) {
  static_cast<IoctlCompletion*>(self)->interrupt();
}

void IoctlCompletion::interrupt() {
  mark_interrupted();
  interrupts_.post(proc_, tid_);
}

void IoctlCompletion::complete(long result, std::span<const std::byte> out) {
  fuse_req_t req = std::exchange(req_, nullptr);
  if (!uring_) {
    // Unregistering waits for a running interrupt callback, so `this` outlives it.
    fuse_req_interrupt_func(req, nullptr, nullptr);
    return reply(req, result, out);
  }
  uring_->untrack(*this);  // waits for a running signal scan, so `this` outlives it
  if (may_wait_for_queue_of(receiver_)) {
    UringRequests::ReplyPass pass(*uring_);
    if (pass.open()) reply(req, result, out);
    return;
  }
  // The reply thread sends it (uring_requests.h: ring threads waiting for each other's queue
  // locks deadlock).
  run_guarded(
      RequestEntry::kWorker, "ioctl reply",
      [&] {
        auto [final_result, size] = copy_out(result, out);
        uring_->reply_later(
            [req, result = final_result, bytes = std::vector(out.begin(), out.begin() + size)] {
              send_ioctl_reply(req, result, bytes);
            });
      },
      // Not answered here: a reply from this thread could deadlock the rings (above). The
      // kernel ends the request when the connection goes.
      [](int) {});
}

std::pair<long, std::size_t> IoctlCompletion::copy_out(long result,
                                                       std::span<const std::byte> out) {
  std::size_t size = std::min(out.size(), out_size_);
  if (copy_out_to_ && size > 0) {
    // copy_to_user: a caller whose argument is not writable gets the kernel's errno (EFAULT,
    // EINVAL for BINDER_VERSION).
    if (memory_.write(*copy_out_to_, out.data(), size) != 0) result = -copy_out_errno_;
    size = 0;
  }
  return {result, size};
}

void IoctlCompletion::reply(fuse_req_t req, long result, std::span<const std::byte> out) {
  auto [final_result, size] = copy_out(result, out);
  send_ioctl_reply(req, final_result, out.first(size));
}

void send_ioctl_reply(fuse_req_t req, long result, std::span<const std::byte> out) {
  std::size_t size = out.size();
  if (result < 0 && size == 0) {
    fuse::reply_err(req, static_cast<int>(-result));
  } else {
    // A negative result with data is how the kernel's FUSE returns both an errno and the
    // copied-back argument (binder_write_read after EINTR/EAGAIN, S1.11/S1.12).
    fuse::reply_ioctl(req, static_cast<int>(result), out.data(), size);
  }
}

void reply_proc_poll(fuse_req_t req, core::Proc& proc, pid_t tid, fuse_pollhandle* handle) {
  std::unique_ptr<core::PollWaiter> waiter;
  if (handle) waiter = std::make_unique<FusePollWaiter>(handle);
  unsigned events = proc.poll(tid, std::move(waiter));
  fuse::reply_poll(
      req, ((events & core::kPollIn) ? POLLIN : 0) | ((events & core::kPollErr) ? POLLERR : 0));
}

}  // namespace cused::fuse
