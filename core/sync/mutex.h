// SPDX-License-Identifier: GPL-2.0-only
// sync::Mutex: the "barging" lock policy (lock_policy=barging), a sleeping futex mutex with no
// spinning and no queue. Unlock releases the lock and wakes one sleeper, and anyone may take the
// lock meanwhile: the kernel's mutex without optimistic spinning and without MUTEX_FLAG_HANDOFF.
// It is the baseline every lock experiment compares to (docs/locking.md).
#pragma once

#include "core/sync/barging_word.h"
#include "core/sync/lock_api.h"
#include "core/sync/lock_guard.h"  // LockGuard comes with sync::Mutex
#include "core/sync/thread_annotations.h"

namespace cused::sync {

class CUSED_CAPABILITY("mutex") Mutex : public LockApi<Mutex> {
 public:
  Mutex() = default;

 private:
  friend class LockApi<Mutex>;
  void acquire() { word_.acquire(/*spin_rounds=*/0); }
  bool try_acquire() { return word_.try_acquire(); }
  void release() { word_.release(); }

  detail::BargingWord word_;
};

}  // namespace cused::sync
