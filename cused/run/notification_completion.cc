// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/notification_completion.h"

#include <algorithm>
#include <cerrno>

#include "cused/request/interrupt_worker.h"

namespace cused::run {

NotificationCompletion::NotificationCompletion(std::shared_ptr<Session> session, std::uint64_t id,
                                               pid_t tid, pid_t tgid, std::uint64_t arg,
                                               core::IoctlArgument argument,
                                               std::weak_ptr<core::Proc> proc)
    : session_(std::move(session)),
      id_(id),
      tid_(tid),
      arg_(arg),
      argument_(argument),
      proc_(std::move(proc)),
      memory_(*this, tid),
      files_(session_, id, tgid) {
  session_->signals.track(*this);
}

NotificationCompletion::~NotificationCompletion() {
  if (!answered_) complete(-EIO, {});
}

bool NotificationCompletion::still_waiting() const {
  constexpr auto kTrustFor = std::chrono::milliseconds(1);
  auto now = std::chrono::steady_clock::now();
  if (now - waiting_at_ < kTrustFor) return true;
  if (!session_->listener.valid(id_)) return false;
  waiting_at_ = now;
  return true;
}

int NotificationCompletion::CallerMemory::write(std::uint64_t addr, const void* src,
                                                std::size_t len) {
  completion_.written_argument_size_ = 0;  // it may overlap the argument
  if (!completion_.still_waiting()) return -EFAULT;
  return memory_.write(addr, src, len);
}

std::size_t NotificationCompletion::CallerMemory::write_ranges(
    std::span<const core::UserWriteRange> ranges) {
  completion_.written_argument_size_ = 0;
  if (!completion_.still_waiting()) return 0;
  return memory_.write_ranges(ranges);
}

int NotificationCompletion::write_read_buffer(std::uint64_t addr, std::span<const std::byte> data,
                                              std::span<const std::byte> argument) {
  std::size_t size = std::min({argument.size(), argument_.copy_out, written_argument_.size()});
  const core::UserWriteRange ranges[] = {{addr, data.data(), data.size()},
                                         {arg_, argument.data(), size}};
  // The kernel stops at the first range it cannot write: the argument is written only after the
  // whole buffer, as binder_ioctl_write_read copies it back after the read.
  std::size_t whole = memory_.write_ranges(ranges);
  if (whole == 0) return -EFAULT;
  if (whole == 2) {
    std::copy_n(argument.data(), size, written_argument_.data());
    written_argument_size_ = size;
  }
  return 0;
}

void NotificationCompletion::complete(long result, std::span<const std::byte> out) {
  answered_ = true;
  session_->signals.untrack(*this);  // waits for a running signal scan, so `this` outlives it
  // binder_ioctl's copy_to_user: the argument goes back on success, and BINDER_WRITE_READ's also
  // with EINTR or EAGAIN (S1.11, S1.12), which core passes as `out`. If write_read_buffer wrote
  // this very argument last, it is in place already.
  std::size_t size = std::min(out.size(), argument_.copy_out);
  const bool in_place = size > 0 && size == written_argument_size_ &&
                        std::equal(out.begin(), out.begin() + size, written_argument_.begin());
  if (size > 0 && !in_place && memory_.write(arg_, out.data(), size) != 0)
    result = -argument_.copy_out_errno;
  // ENOENT: the program was killed meanwhile; nobody waits for the answer.
  session_->listener.answer(id_, result);
}

void NotificationCompletion::interrupt() {
  mark_interrupted();
  session_->interrupts.post(proc_, tid_);
}

}  // namespace cused::run
