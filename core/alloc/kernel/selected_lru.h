// SPDX-License-Identifier: GPL-2.0-only
// The LRU whose lock a kernel design's list_lru lock stands for on this thread (kernel_runtime.h):
// the LRU of the allocator whose page the thread is about to add, delete or reclaim. A loaded file
// has one list_lru; the daemon has one PageLru, but each test has its own.
#pragma once

namespace cused::core::alloc {

class PageLru;

inline PageLru*& selected_kernel_lru() {
  static thread_local PageLru* lru = nullptr;
  return lru;
}

}  // namespace cused::core::alloc
