// SPDX-License-Identifier: GPL-2.0-only
// The cused_lock_* events of one of the engine's locks (docs/tracing.md "cused's own events"):
// which lock, its design (alloc_lock= variant, lock_policy=), how long a contended acquisition
// waited and behind which holder, how long a hold that matters lasted and how often its holder
// was preempted in it. The task is trace::current_task(): the client whose request the holder or
// waiter serves, as for the kernel's events.
//
// What is emitted, per acquisition while a trace is written:
//  - cused_lock_contended when the lock was not free at the first try (with the holder's tid and
//    prio), then cused_lock_acquired with the wait, then cused_lock_released with the hold;
//  - for an acquisition that was not contended, only cused_lock_released, and only when the hold
//    lasted kLongHold or more: the holds that make others wait. An uncontended short hold, the
//    common case, is not emitted, which keeps the rings for what explains an A/B. A spinlock's
//    (policy kNoLockPolicy) every hold is emitted: how many of its holds were preempted is what
//    a spin design is measured by, and that share is of all holds, not of the contended or long
//    ones (which are contended or long mostly because their holder was preempted).
// A hold ends when the lock is released: its length and its holder's preemptions are read before
// the release, so that what the release does after it (a spinlock's holder leaving its
// unpreemptible section, and being preempted at once by what waited for its CPU) is not counted
// in the hold.
// A try_lock that fails emits nothing: its caller (the shrinker) skips the page instead of waiting.
//
// With tracing off a lock costs its owner one load of the sink and one predictable branch, an
// unlock one load of a flag the holder owns; the clock is never read.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "core/sync/thread_annotations.h"
#include "core/trace_events.h"

namespace cused::core {

// The locks that emit cused_lock_*, printed as lock=alloc, lock=proc_inner, ...
enum class TracedLock : std::uint8_t {
  alloc,          // the allocator's metadata lock (alloc::AllocLock)
  alloc_install,  // spin-install's install mutex
  context,        // binder_context.context_mgr_node_lock
  proc_outer,     // binder_proc.outer_lock
  node,           // binder_node.lock
  proc_inner,     // binder_proc.inner_lock
  // A kernel design's (alloc_lock=kernel:TREE, docs/kernel-designs.md) other locks than its
  // metadata lock, which is `alloc`:
  alloc_mmap,  // the file's static binder_alloc_mmap_lock
  mmap,        // the proc's mm->mmap_lock (a reader-writer lock)
  vma,         // the per-VMA lock of the proc's mapping (a reader-writer lock)
};

// "alloc", "alloc_install", "context", "proc_outer", "node", "proc_inner": the lock= of the events.
std::string_view to_string(TracedLock lock);

// The design field (variant=) is the trace id of the allocator design whose lock it is, from the
// registry of designs (core/alloc/designs/registry.cc, which checks that this is its mutex row):
// the proc, node and context locks are sleeping locks, printed as mutex.
inline constexpr std::uint8_t kSleepingLockDesign = 0;
// The policy field of a lock that has none (the spinlock of the spin variants).
inline constexpr std::uint64_t kNoLockPolicy = 0xff;

class LockTrace {
 public:
  // A hold this long is traced even when nobody waited for the lock.
  static constexpr std::chrono::microseconds kLongHold{10};

  // `policy` is kNoLockPolicy for a lock that spins.
  LockTrace(TracedLock lock, std::uint8_t design, std::uint64_t policy)
      : lock_(lock), design_(design), policy_(policy) {}
  LockTrace(const LockTrace&) = delete;
  LockTrace& operator=(const LockTrace&) = delete;

  // lock.lock() (and try_lock first when tracing), with the events. These forward to `lock`; the
  // analysis checks the callers of the lock that owns this trace.
  template <typename Lock>
  void lock(Lock&& lock) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    if (__builtin_expect(!trace::enabled(), 1)) {
      lock.lock();
      return;
    }
    if (lock.try_lock()) {
      begin_hold(false);
      return;
    }
    contended();
    const auto since = trace::TraceClock::now();
    lock.lock();
    acquired(since);
  }

  template <typename Lock>
  bool try_lock(Lock&& lock) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    if (!lock.try_lock()) return false;
    if (__builtin_expect(trace::enabled(), 0)) begin_hold(false);
    return true;
  }

  // Emitted after the release, so that the sink's cost is not part of the hold others wait for;
  // the hold's end is read before it.
  template <typename Lock>
  void unlock(Lock&& lock) CUSED_NO_THREAD_SAFETY_ANALYSIS {
    if (__builtin_expect(!traced_, 1)) {
      lock.unlock();
      return;
    }
    const Hold hold = end_hold();
    lock.unlock();
    released(hold);
  }

 private:
  struct Hold {
    trace::TraceClock::time_point since;
    std::uint64_t switches_before = 0;  // the holder's involuntary context switches at the start
    bool contended = false;
    // Read by end_hold(), before the release.
    trace::TraceClock::time_point until{};
    std::uint64_t switches_after = 0;
  };

  [[gnu::cold]] void contended() const;
  [[gnu::cold]] void acquired(trace::TraceClock::time_point since);
  [[gnu::cold]] void begin_hold(bool contended);
  [[gnu::cold]] Hold end_hold();
  [[gnu::cold]] void released(const Hold& hold) const;

  const TracedLock lock_;
  const std::uint8_t design_;
  const std::uint64_t policy_;
  // The current hold's, written and read by the holder only (the lock orders holders).
  bool traced_ = false;
  Hold hold_;
  // The traced holder's task tid, for a waiter's cused_lock_contended; 0 when the hold is not
  // traced. Written by the holder, read by waiters that do not hold the lock.
  std::atomic<pid_t> holder_{0};
};

}  // namespace cused::core
