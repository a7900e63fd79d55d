// SPDX-License-Identifier: GPL-2.0-only
// spin-install's install mutex (docs/allocator.md): a sync::PolicyMutex that emits the
// cused_lock_* events as lock=alloc_install (core/traced_mutex.h), so that a trace of spin-install
// shows its waits beside the mutex design's waits on lock=alloc.
#pragma once

#include "core/traced_mutex.h"

namespace cused::core::alloc {

using InstallLock = TracedMutex<TracedLock::alloc_install>;

}  // namespace cused::core::alloc
