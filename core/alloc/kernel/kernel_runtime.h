// SPDX-License-Identifier: GPL-2.0-only
// cused's side of a kernel design's runtime (struct cused_krt of kernel_shim/include/
// cused_kernel_abi.h): the locks the kernel's file takes, its pages and its LRU, as the
// KernelAllocator they were made for does them.
#pragma once

#include "kernel_shim/include/cused_kernel_abi.h"

namespace cused::core::alloc {

class PageLru;

// The runtime every kernel design's object is initialized with.
const cused_krt& kernel_runtime();

// The LRU whose lock the object's list_lru lock stands for on this thread: the LRU of the
// allocator whose page the thread is about to add, delete or reclaim.
void select_kernel_lru(PageLru& lru);

// The debug checks that fired with no allocator to charge them to (a lock made before any proc),
// and how many fired in all.
struct KernelReportCounts {
  unsigned long warn = 0, atomic_sleep = 0, leak = 0, lock_leak = 0;
};
KernelReportCounts kernel_report_counts();

}  // namespace cused::core::alloc
