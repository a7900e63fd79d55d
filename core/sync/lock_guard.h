// SPDX-License-Identifier: GPL-2.0-only
// RAII holder for any of core/sync's capabilities, visible to -Wthread-safety.
#pragma once

#include "core/sync/thread_annotations.h"

namespace cused::sync {

template <typename Lock>
class CUSED_SCOPED_CAPABILITY LockGuard {
 public:
  explicit LockGuard(Lock& lock) CUSED_ACQUIRE(lock) : lock_(lock) { lock_.lock(); }
  ~LockGuard() CUSED_RELEASE() { lock_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  Lock& lock_;
};

}  // namespace cused::sync
