// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=upstream, read top to bottom like 6.14's binder_alloc.c (upstream.h states the lock
// order).
#include "core/alloc/designs/upstream.h"

namespace cused::core::alloc {

// binder_alloc_new_buf: the metadata under the mutex, then binder_install_buffer_pages without it.
NewBufferResult UpstreamAllocator::new_buffer(std::size_t data_size, std::size_t offsets_size,
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
        // binder_lru_freelist_del: the shrinker holds lock_ from isolating a page until it is
        // punched, so no page met here is isolated.
        take_pages_locked(pass, OnIsolated::take);
        commit_locked(pass, request);
        return pass;
      },
      [] {});
  // The pages are ours (each has a user, none is on the LRU): install the missing ones without
  // the mutex, alongside other allocations; a page someone else installed first is installed.
  return answer_installed(reservation, reservation.node ? install_pages(reservation.pages) : 0);
}

// binder_alloc_free_page: try-lock the mutex, keep it across the zap.
ReclaimStep UpstreamAllocator::reclaim_page(Page& page, const ReclaimHook& hook) {
  return reclaim_holding(lock_, page, hook);
}

}  // namespace cused::core::alloc
