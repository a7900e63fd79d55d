// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=spin, read top to bottom (spin.h states the lock order and the race kept on purpose).
#include "core/alloc/designs/spin.h"

namespace cused::core::alloc {

// Metadata under the spinlock, installation after it, unordered with any reclaim.
NewBufferResult SpinAllocator::new_buffer(std::size_t data_size, std::size_t offsets_size,
                                          std::size_t extra_buffers_size, bool is_async,
                                          pid_t sender_pid) {
  Request request;
  if (int error = admit(data_size, offsets_size, extra_buffers_size, is_async, sender_pid, request))
    return {nullptr, error};
  Reservation reservation = reserve(
      [&](std::unique_ptr<BufferNode>& spare) {
        sync::LockGuard guard(lock_);
        Reservation pass = reserve_locked(request, spare);
        if (!pass.node) return pass;
        // A page the shrinker isolated (already marked not installed, not punched yet) is taken
        // as free: the race.
        take_pages_locked(pass, OnIsolated::take);
        commit_locked(pass, request);
        return pass;
      },
      [] {});
  return answer_installed(reservation, reservation.node ? install_pages(reservation.pages) : 0);
}

// The metadata is updated under the spinlock, but the punch comes later, unlocked: an allocation
// in between sees a free page, reuses it, and loses what it writes.
ReclaimStep SpinAllocator::reclaim_page(Page& page, const ReclaimHook& hook) {
  if (detached_locked() || !lock_.try_lock()) return ReclaimStep::skipped;
  page.set_installed(false);
  lock_.unlock();
  isolate_locked(page);
  lru_.lock().unlock();
  punch(page, hook);
  lru_.lock().lock();
  end_isolation_locked(page);
  return end_reclaim_locked();
}

}  // namespace cused::core::alloc
