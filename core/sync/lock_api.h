// SPDX-License-Identifier: GPL-2.0-only
// The annotated lock()/try_lock()/unlock() that every lock of core/sync offers, around the
// policy-specific acquire()/try_acquire()/release() of the class that derives from it (CRTP: no
// virtual call, the fast paths inline). It is the one place that carries the clang
// -Wthread-safety capability and the ThreadSanitizer mutex annotations.
#pragma once

#include "core/sync/thread_annotations.h"
#include "core/sync/tsan.h"

namespace cused::sync {

template <typename Lock>
class CUSED_CAPABILITY("mutex") LockApi {
 public:
  LockApi(const LockApi&) = delete;
  LockApi& operator=(const LockApi&) = delete;

  void lock() CUSED_ACQUIRE() {
    tsan::pre_lock(this);
    self().acquire();
    tsan::post_lock(this);
  }
  bool try_lock() CUSED_TRY_ACQUIRE(true) {
    tsan::pre_try_lock(this);
    const bool acquired = self().try_acquire();
    tsan::post_try_lock(this, acquired);
    return acquired;
  }
  void unlock() CUSED_RELEASE() {
    tsan::pre_unlock(this);
    self().release();
    tsan::post_unlock(this);
  }

 protected:
  LockApi() = default;
  ~LockApi() { tsan::destroy(this); }

  // Brackets code that acquire() runs on behalf of someone else (test hooks), so that TSan does
  // not count what it does as part of the lock.
  void divert_begin() { tsan::pre_divert(this); }
  void divert_end() { tsan::post_divert(this); }

 private:
  Lock& self() { return static_cast<Lock&>(*this); }
};

}  // namespace cused::sync
