// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/kernel/kernel_runtime.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/alloc/alloc_lock.h"
#include "core/alloc/kernel/kernel_allocator.h"
#include "core/alloc/kernel/selected_lru.h"
#include "core/alloc/page_lru.h"
#include "core/lock_trace.h"
#include "core/sync/policy_mutex.h"
#include "core/sync/preemption.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"
#include "core/traced_mutex.h"

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

// The mmap lock and a per-VMA lock: a reader-writer lock (std::shared_mutex: glibc's default
// pthread rwlock underneath, whose readers go first), traced as lock=mmap / lock=vma with the
// design's id and policy=barging (no handoff, anyone may take it). A writer's hold is traced as any
// lock's; readers hold the lock side by side, so each traced reader hold has a trace of its own,
// kept on the reader's thread until it unlocks (a reader that waited behind a writer names no
// holder: holder=0). With tracing off a reader pays one load of the sink, its unlock one look at
// its thread's empty list.
class TracedRwLock {
 public:
  TracedRwLock(TracedLock name, std::uint8_t design)
      : name_(name), design_(design), writer_(name, design, kPolicy) {}
  TracedRwLock(const TracedRwLock&) = delete;
  TracedRwLock& operator=(const TracedRwLock&) = delete;

  void write_lock() { writer_.lock(Exclusive{lock_}); }
  void write_unlock() { writer_.unlock(Exclusive{lock_}); }

  void read_lock() {
    if (__builtin_expect(!trace::enabled(), 1)) {
      lock_.lock_shared();
      return;
    }
    auto trace = std::make_unique<LockTrace>(name_, design_, kPolicy);
    trace->lock(Shared{lock_});
    reader_holds.emplace_back(this, std::move(trace));
  }
  bool read_trylock() {
    if (__builtin_expect(!trace::enabled(), 1)) return lock_.try_lock_shared();
    auto trace = std::make_unique<LockTrace>(name_, design_, kPolicy);
    if (!trace->try_lock(Shared{lock_})) return false;
    reader_holds.emplace_back(this, std::move(trace));
    return true;
  }
  void read_unlock() {
    for (auto it = reader_holds.rbegin(); it != reader_holds.rend(); ++it) {
      if (it->first != this) continue;
      std::unique_ptr<LockTrace> trace = std::move(it->second);
      reader_holds.erase(std::next(it).base());
      trace->unlock(Shared{lock_});
      return;
    }
    lock_.unlock_shared();  // a hold taken while tracing was off
  }

 private:
  static constexpr std::uint64_t kPolicy = static_cast<std::uint64_t>(sync::LockPolicy::kBarging);
  struct Exclusive {
    std::shared_mutex& rw;
    void lock() { rw.lock(); }
    bool try_lock() { return rw.try_lock(); }
    void unlock() { rw.unlock(); }
  };
  struct Shared {
    std::shared_mutex& rw;
    void lock() { rw.lock_shared(); }
    bool try_lock() { return rw.try_lock_shared(); }
    void unlock() { rw.unlock_shared(); }
  };
  // This thread's traced reader holds, of every TracedRwLock, the latest last.
  static thread_local std::vector<std::pair<const TracedRwLock*, std::unique_ptr<LockTrace>>>
      reader_holds;

  std::shared_mutex lock_;
  const TracedLock name_;
  const std::uint8_t design_;
  LockTrace writer_;
};
thread_local std::vector<std::pair<const TracedRwLock*, std::unique_ptr<LockTrace>>>
    TracedRwLock::reader_holds;

TracedRwLock* as_rwlock(void* lock) { return static_cast<TracedRwLock*>(lock); }

void* rwlock_create(void* owner, const char* name) {
  const KernelAllocator* alloc = allocator(owner);
  const std::uint8_t design = alloc ? alloc->trace_id() : kSleepingLockDesign;
  const TracedLock traced =
      std::string_view(name) == "&mm->mmap_lock" ? TracedLock::mmap : TracedLock::vma;
  return new (std::nothrow) TracedRwLock(traced, design);
}

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
  if (std::string_view(name) == "binder_alloc_mmap_lock")
    return new LockOf<TracedMutex<TracedLock::alloc_mmap>>(policy, design);
  return new LockOf<sync::PolicyMutex>(policy);
}

std::atomic<unsigned long> orphan_warn{0}, orphan_sleep{0}, orphan_leak{0}, orphan_lock_leak{0},
    orphan_lock_order{0};
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
    case CUSED_KREPORT_LOCK_ORDER:
      ++orphan_lock_order;
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

// Lockdep's rule in every loaded object (set_kernel_lockdep); C reads it with __atomic_load_n.
int lockdep_on = 0;

const cused_krt kRuntime = {
    .lock_create = lock_create,
    .lock_destroy = [](void* lock) { delete as_lock(lock); },
    .lock_lock = [](void* lock) { as_lock(lock)->lock(); },
    .lock_trylock = [](void* lock) { return as_lock(lock)->try_lock() ? 1 : 0; },
    .lock_unlock = [](void* lock) { as_lock(lock)->unlock(); },
    .rwlock_create = rwlock_create,
    .rwlock_destroy = [](void* lock) { delete as_rwlock(lock); },
    .rwlock_read_lock = [](void* lock) { as_rwlock(lock)->read_lock(); },
    .rwlock_read_trylock = [](void* lock) { return as_rwlock(lock)->read_trylock() ? 1 : 0; },
    .rwlock_read_unlock = [](void* lock) { as_rwlock(lock)->read_unlock(); },
    .rwlock_write_lock = [](void* lock) { as_rwlock(lock)->write_lock(); },
    .rwlock_write_unlock = [](void* lock) { as_rwlock(lock)->write_unlock(); },
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
    .lockdep = &lockdep_on,
};

}  // namespace

const cused_krt& kernel_runtime() { return kRuntime; }

void set_kernel_lockdep(bool on) { __atomic_store_n(&lockdep_on, on ? 1 : 0, __ATOMIC_RELAXED); }

KernelReportCounts kernel_report_counts() {
  std::lock_guard guard(orphan_mutex);
  return {orphan_warn.load(),      orphan_sleep.load(),      orphan_leak.load(),
          orphan_lock_leak.load(), orphan_lock_order.load(), orphan_last};
}

}  // namespace cused::core::alloc
