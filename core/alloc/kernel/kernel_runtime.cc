// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/kernel/kernel_runtime.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/alloc/alloc_lock.h"
#include "core/alloc/kernel/kernel_allocator.h"
#include "core/alloc/kernel/selected_lru.h"
#include "core/alloc/page_lru.h"
#include "core/lock_trace.h"
#include "core/sync/policy_mutex.h"
#include "core/sync/preemption.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

namespace {

// A lock of the kernel's file, as the runtime's lock calls see it.
class KernelLock {
 public:
  virtual ~KernelLock() = default;
  virtual void lock() = 0;
  virtual bool try_lock() = 0;
  virtual void unlock() = 0;
};

// `Lock` behind the interface: a lock type with lock/try_lock/unlock.
template <typename Lock>
class LockOf final : public KernelLock {
 public:
  template <typename... Args>
  explicit LockOf(Args&&... args) : lock_(std::forward<Args>(args)...) {}
  void lock() override CUSED_NO_THREAD_SAFETY_ANALYSIS { lock_.lock(); }
  bool try_lock() override CUSED_NO_THREAD_SAFETY_ANALYSIS { return lock_.try_lock(); }
  void unlock() override CUSED_NO_THREAD_SAFETY_ANALYSIS { lock_.unlock(); }

 private:
  Lock lock_;
};

// A spinlock that is not the allocator's (untraced): held with preemption disabled.
class PlainSpin {
 public:
  void lock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    spin_.lock();
    sync::preempt_disable();
  }
  bool try_lock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    if (!spin_.try_lock()) return false;
    sync::preempt_disable();
    return true;
  }
  void unlock() CUSED_NO_THREAD_SAFETY_ANALYSIS {
    spin_.unlock();
    sync::preempt_enable();
  }

 private:
  sync::SpinLock spin_;
};

// The file's list_lru lock: the lock of the PageLru that this thread selected.
class LruLock final : public KernelLock {
 public:
  void lock() override CUSED_NO_THREAD_SAFETY_ANALYSIS { selected_kernel_lru()->lock().lock(); }
  bool try_lock() override CUSED_NO_THREAD_SAFETY_ANALYSIS {
    return selected_kernel_lru()->lock().try_lock();
  }
  void unlock() override CUSED_NO_THREAD_SAFETY_ANALYSIS { selected_kernel_lru()->lock().unlock(); }
};
LruLock lru_lock;

KernelAllocator* allocator(void* owner) { return static_cast<KernelAllocator*>(owner); }
KernelLock* as_lock(void* lock) { return static_cast<KernelLock*>(lock); }

// The file's metadata lock, traced as lock=alloc like cused's designs' (core/lock_trace.h):
// 6.1 and 6.14+ name it alloc->mutex, 6.8 to 6.13 alloc->lock.
bool is_alloc_lock(std::string_view name) {
  return name == "&alloc->mutex" || name == "&alloc->lock";
}

void* lock_create(void* owner, cused_klock_kind kind, const char* name) {
  const KernelAllocator* alloc = allocator(owner);
  const sync::LockPolicy policy =
      alloc ? *alloc->sleeping_lock_policy() : sync::LockPolicy::kBarging;
  const std::uint8_t design = alloc ? alloc->trace_id() : kSleepingLockDesign;
  if (kind == CUSED_KLOCK_SPIN) {
    if (is_alloc_lock(name)) return new LockOf<AllocSpinLock>(policy, design);
    return new LockOf<PlainSpin>();
  }
  if (is_alloc_lock(name)) return new LockOf<SleepingAllocLock>(policy, design);
  return new LockOf<sync::PolicyMutex>(policy);
}

std::atomic<unsigned long> orphan_warn{0}, orphan_sleep{0}, orphan_leak{0}, orphan_lock_leak{0};
std::mutex orphan_mutex;
std::string orphan_last;

void report(void* owner, cused_kreport kind, const char* text) {
  if (owner) {
    allocator(owner)->report(kind, text);
    return;
  }
  std::fprintf(stderr, "cused: kernel: %s\n", text);
  {
    std::lock_guard guard(orphan_mutex);
    orphan_last = text;
  }
  switch (kind) {
    case CUSED_KREPORT_WARN:
    case CUSED_KREPORT_BUG:
      ++orphan_warn;
      break;
    case CUSED_KREPORT_ATOMIC_SLEEP:
      ++orphan_sleep;
      break;
    case CUSED_KREPORT_LEAK:
      ++orphan_leak;
      break;
    case CUSED_KREPORT_LOCK_LEAK:
      ++orphan_lock_leak;
      break;
  }
}

void log(void* owner, int /*level*/, const char* line) {
  if (owner)
    allocator(owner)->log(line);
  else
    std::fprintf(stderr, "cused: kernel: %s\n", line);
}

// The LRU calls run with the LRU's lock held, which the analysis cannot see through C.
void lru_link(void* owner, std::size_t index) CUSED_NO_THREAD_SAFETY_ANALYSIS {
  allocator(owner)->lru_link(index);
}
void lru_unlink(void* owner, std::size_t index) CUSED_NO_THREAD_SAFETY_ANALYSIS {
  allocator(owner)->lru_unlink(index);
}
void lru_isolate(void* owner, std::size_t index) CUSED_NO_THREAD_SAFETY_ANALYSIS {
  allocator(owner)->lru_isolate(index);
}

const cused_krt kRuntime = {
    .lock_create = lock_create,
    .lock_destroy = [](void* lock) { delete as_lock(lock); },
    .lock_lock = [](void* lock) { as_lock(lock)->lock(); },
    .lock_trylock = [](void* lock) { return as_lock(lock)->try_lock() ? 1 : 0; },
    .lock_unlock = [](void* lock) { as_lock(lock)->unlock(); },
    .lru_lock = static_cast<KernelLock*>(&lru_lock),
    .lru_select = [](void* owner) { selected_kernel_lru() = &allocator(owner)->lru(); },
    .page_install = [](void* owner,
                       std::size_t index) { return allocator(owner)->install_page(index); },
    .page_address = [](void* owner,
                       std::size_t index) { return allocator(owner)->page_address(index); },
    .page_punch = [](void* owner, std::size_t index) { allocator(owner)->punch_page(index); },
    .lru_link = lru_link,
    .lru_unlink = lru_unlink,
    .lru_isolate = lru_isolate,
    .trace =
        [](void* owner, cused_ktrace event, std::size_t index) {
          if (owner) allocator(owner)->trace(event, index);
        },
    .trace_range =
        [](void* owner, int allocate, std::size_t offset, std::size_t size) {
          if (owner) allocator(owner)->trace_range(allocate != 0, offset, size);
        },
    .log = log,
    .report = report,
};

}  // namespace

const cused_krt& kernel_runtime() { return kRuntime; }

KernelReportCounts kernel_report_counts() {
  std::lock_guard guard(orphan_mutex);
  return {orphan_warn.load(), orphan_sleep.load(), orphan_leak.load(), orphan_lock_leak.load(),
          orphan_last};
}

}  // namespace cused::core::alloc
