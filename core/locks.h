// SPDX-License-Identifier: GPL-2.0-only
// The engine's locks, named for the kernel locks they stand for (docs/design.md section 3), and the
// one bridge -Wthread-safety needs: an object guarded by its proc's inner lock keeps a reference to
// that lock, and code that holds the proc's lock under its own name tells the analysis so.
//
// Lock order (docs/protocol.md): driver procs lock, context manager lock, proc outer lock, node
// lock, proc inner lock, transaction lock. The allocator's locks are taken with none of the proc or
// node locks held.
#pragma once

#include <cassert>

#include "core/sync/mutex.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"
#include "core/traced_mutex.h"

namespace cused::core {

// The context, proc and node locks behave as the device variant's lock_policy= says
// (docs/locking.md) and emit cused_lock_* events while a trace is written (docs/tracing.md); the
// transaction lock is a leaf spinlock, as in the kernel.
using ContextLock = TracedMutex<TracedLock::context>;   // binder_context.context_mgr_node_lock
using OuterLock = TracedMutex<TracedLock::proc_outer>;  // binder_proc.outer_lock: refs
using NodeLock = TracedMutex<TracedLock::node>;         // binder_node.lock
// binder_proc.inner_lock: queues, threads, nodes, stacks
using InnerLock = TracedMutex<TracedLock::proc_inner>;
using TxnLock = sync::SpinLock;  // binder_transaction.lock: from / to_proc / to_thread
using ProcsLock = sync::Mutex;   // binder_procs_lock

// `alias` names the same lock as `held` (checked): from here on the analysis treats it as held.
template <typename Lock>
inline void assume_same_lock(const Lock& held, const Lock& alias) CUSED_REQUIRES(held)
    CUSED_ASSERT_CAPABILITY(alias) {
  assert(&held == &alias);
  (void)held;
  (void)alias;
}

}  // namespace cused::core
