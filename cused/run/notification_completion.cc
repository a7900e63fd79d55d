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
  if (!completion_.still_waiting()) return -EFAULT;
  return memory_.write(addr, src, len);
}

void NotificationCompletion::complete(long result, std::span<const std::byte> out) {
  answered_ = true;
  session_->signals.untrack(*this);  // waits for a running signal scan, so `this` outlives it
  // binder_ioctl's copy_to_user: the argument goes back on success, and BINDER_WRITE_READ's also
  // with EINTR or EAGAIN (S1.11, S1.12), which core passes as `out`.
  std::size_t size = std::min(out.size(), argument_.copy_out);
  if (size > 0 && memory_.write(arg_, out.data(), size) != 0) result = -argument_.copy_out_errno;
  // ENOENT: the program was killed meanwhile; nobody waits for the answer.
  session_->listener.answer(id_, result);
}

void NotificationCompletion::interrupt() {
  mark_interrupted();
  session_->interrupts.post(proc_, tid_);
}

}  // namespace cused::run
