#include "cused/binderfs/fuse_completion.h"

#include <algorithm>
#include <cerrno>
#include <utility>

namespace cused::binderfs {

IoctlCompletion::~IoctlCompletion() {
  // core must answer every request; if one is dropped unanswered (a bug), the caller gets EIO
  // instead of hanging forever.
  if (req_) complete(-EIO, {});
}

void IoctlCompletion::watch_interrupts(UringRequests* uring) {
  uring_ = uring;
  if (uring_)
    uring_->track(*this);
  else
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
  UringRequests::ReplyPass pass(*uring_);
  if (pass.open()) reply(req, result, out);
}

void IoctlCompletion::reply(fuse_req_t req, long result, std::span<const std::byte> out) {
  std::size_t size = std::min(out.size(), out_size_);
  if (copy_out_to_ && size > 0) {
    // copy_to_user: a caller whose argument is not writable gets EFAULT, as from the kernel.
    if (memory_.write(*copy_out_to_, out.data(), size) != 0) result = -EFAULT;
    size = 0;
  }
  if (result < 0 && size == 0) {
    fuse_reply_err(req, static_cast<int>(-result));
  } else {
    // A negative result with data is how the kernel's FUSE returns both an errno and the
    // copied-back argument (binder_write_read after EINTR/EAGAIN, S1.11/S1.12).
    fuse_reply_ioctl(req, static_cast<int>(result), out.data(), size);
  }
}

}  // namespace cused::binderfs
