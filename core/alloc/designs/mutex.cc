// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=mutex, read top to bottom like 6.1's binder_alloc.c (mutex.h states the lock order).
#include "core/alloc/designs/mutex.h"

namespace cused::core::alloc {

// binder_alloc_new_buf: everything, installation included, under the one mutex.
NewBufferResult MutexAllocator::new_buffer(std::size_t data_size, std::size_t offsets_size,
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
        // The shrinker holds lock_ from isolating a page until it is punched: no page we meet
        // here is isolated.
        take_pages_locked(pass, OnIsolated::take);
        commit_locked(pass, request);
        pass.error = install_pages(pass.pages);
        if (pass.error != 0) {
          free_locked(*pass.node);
          pass.node = nullptr;
        }
        return pass;
      },
      [] {});
  return answer(reservation);
}

// binder_alloc_free_page: try-lock the mutex, keep it until the page is punched.
ReclaimStep MutexAllocator::reclaim_page(Page& page, const ReclaimHook& hook) {
  return reclaim_holding(lock_, page, hook);
}

}  // namespace cused::core::alloc
