// SPDX-License-Identifier: GPL-2.0-only
#include "core/sync/spinlock.h"

#include "core/sync/cpu_relax.h"

namespace cused::sync {

void SpinLock::acquire_contended() {
  Backoff backoff;
  do {
    while (locked_.load(std::memory_order_relaxed)) backoff.pause();
  } while (locked_.exchange(true, std::memory_order_acquire));
}

void SpinLock::wait_until_free() const {
  Backoff backoff;
  while (locked_.load(std::memory_order_relaxed)) backoff.pause();
}

}  // namespace cused::sync
