// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=spin-install, read top to bottom (spin_install.h states the lock order).
#include "core/alloc/designs/spin_install.h"

namespace cused::core::alloc {

SpinInstallAllocator::SpinInstallAllocator(BufferFile& file, Variant variant, PageLru& lru,
                                           AllocatorOptions options, std::uint8_t trace_id)
    : PageSpace(file, variant, lru, options, trace_id),
      install_lock_(options.lock_policy, trace_id) {}

// Metadata under the spinlock; a pass that meets an isolated page rolls back and waits for the
// shrinker; missing pages are installed under the install mutex.
NewBufferResult SpinInstallAllocator::new_buffer(std::size_t data_size, std::size_t offsets_size,
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
        if (!take_pages_locked(pass, OnIsolated::refuse)) {
          undo_locked(pass);
          ++reclaim_conflicts_;
          pass.retry = true;
          return pass;
        }
        commit_locked(pass, request);
        return pass;
      },
      // The shrinker holds the install mutex from isolating a page until it is punched; once we
      // get it, that page is free and can be installed afresh.
      [&] { sync::LockGuard wait(install_lock_); });
  // Pages that are installed now stay installed: take_pages_locked saw none of them isolated and
  // they are ours now, so the shrinker cannot pick them. Only a missing page needs the mutex.
  int error = 0;
  if (reservation.node && !all_installed(reservation.pages)) {
    sync::LockGuard install(install_lock_);
    error = install_pages(reservation.pages);
  }
  return answer_installed(reservation, error);
}

// Try-lock the install mutex and hold it across clear-and-punch; allocations that meet the
// isolated page wait on it.
ReclaimStep SpinInstallAllocator::reclaim_page(Page& page, const ReclaimHook& hook) {
  return reclaim_holding(install_lock_, page, hook);
}

}  // namespace cused::core::alloc
