// SPDX-License-Identifier: GPL-2.0-only
// A client-shaped allocation workload under shrinker stress (docs/design.md section 7): threads
// allocate buffers of a binder client's sizes (mostly small, one in eight up to 64 KiB, one in
// four oneway), fill each with a pattern derived from a per-buffer seed, keep a few alive,
// verify and free them, while the daemon's shrinker thread reclaims in stress mode. A page
// punched out from under a live buffer shows up as a mismatch (the bytes read back as zero).
// alloc-stress runs it over every registered design; `cused check-design` over a kernel tree.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "core/alloc/allocator.h"
#include "core/alloc/shrinker.h"
#include "core/alloc/variant.h"

namespace cused::host {

struct AllocationStressOptions {
  int threads = 4;
  int procs = 2;                          // the threads share the procs' allocators round robin
  std::size_t space = 1 << 20;            // each proc's buffer space
  std::size_t live = 6;                   // buffers each thread keeps alive
  long ops_per_thread = 50000;            // operations per thread, when `duration` is zero
  std::chrono::milliseconds duration{0};  // else: run for this long
};

struct AllocationStressOutcome {
  long ops = 0;
  long lost = 0;               // buffers whose contents did not read back
  long no_space = 0;           // -ENOSPC answers (expected now and then)
  long unexpected_errors = 0;  // any other error from new_buffer
  core::alloc::ShrinkerStats shrinker;
  // Each proc's allocator after every buffer was freed, before release.
  std::vector<core::alloc::AllocatorStats> end_stats;
};

AllocationStressOutcome run_allocation_stress(core::alloc::Variant variant,
                                              const AllocationStressOptions& options);

}  // namespace cused::host
