// SPDX-License-Identifier: GPL-2.0-only
// cused's side of a kernel design's runtime (struct cused_krt of uapi/
// cused_kernel_abi.h): the locks the kernel's file takes, its pages and its LRU, as the
// KernelAllocator they were made for does them.
#pragma once

#include <string>

#include "uapi/cused_kernel_abi.h"

namespace cused::core::alloc {

class PageLru;

// The runtime every kernel design's object is initialized with.
const cused_krt& kernel_runtime();

// The debug checks that fired with no allocator to charge them to (a lock made before any proc),
// and how many fired in all.
struct KernelReportCounts {
  unsigned long warn = 0, atomic_sleep = 0, leak = 0, lock_leak = 0, lock_order = 0;
  std::string last;  // the last such report's text
};
KernelReportCounts kernel_report_counts();

// Lockdep's lock-order rule (cused/kernel_shim/lockdep.c) in every kernel design, from the next
// lock taken on: off by default (cused check-design turns it on; CUSED_KERNEL_LOCKDEP=1 for the
// daemon); off, it costs a load per lock the file takes.
void set_kernel_lockdep(bool on);

}  // namespace cused::core::alloc
