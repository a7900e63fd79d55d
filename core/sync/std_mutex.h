// SPDX-License-Identifier: GPL-2.0-only
// sync::StdMutex: a std::mutex that -Wthread-safety can follow (libstdc++'s std::mutex carries no
// capability annotations), for code outside the engine, such as client/, that guards its fields
// as core does but must not link core's lock policies. Header-only; use it with sync::LockGuard.
#pragma once

#include <mutex>

#include "core/sync/thread_annotations.h"

namespace cused::sync {

class CUSED_CAPABILITY("mutex") StdMutex {
 public:
  void lock() CUSED_ACQUIRE() { mutex_.lock(); }
  void unlock() CUSED_RELEASE() { mutex_.unlock(); }

 private:
  std::mutex mutex_;
};

}  // namespace cused::sync
