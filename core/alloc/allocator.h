// One proc's buffer allocator (the kernel's binder_alloc; spec S9, S11.10, S11.11; docs/design.md
// section 4). It tiles the proc's buffer space [0, size) with buffers, installs pages of the
// proc's memfd (BufferFile) when buffers need them, parks pages no buffer uses on the global
// PageLru, and lets the shrinker punch those pages out of the memfd.
//
// The contract with the protocol engine:
//   * construct one per proc with the proc's BufferFile, a Variant and the daemon's PageLru;
//   * map() once the client's mapping is known, unmap() when it goes (S1.4, S1.6);
//   * new_buffer() for every transaction or reply to this proc; write the payload through
//     contents() (the daemon's mapping of the memfd, pages already installed);
//   * set Buffer::allow_user_free when the buffer is handed to userspace by a read;
//   * BC_FREE_BUFFER: prepare_to_free(address), release the objects, then free_buffer();
//   * destruction (or release()) frees everything (S1.9 step 8).
// Every method is thread-safe. A Buffer stays valid from new_buffer() until free_buffer().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <boost/container/small_vector.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/alloc/alloc_lock.h"
#include "core/alloc/buffer.h"
#include "core/alloc/install_lock.h"
#include "core/alloc/page.h"
#include "core/alloc/page_lru.h"
#include "core/alloc/page_table.h"
#include "core/alloc/range_alloc.h"
#include "core/alloc/variant.h"
#include "core/buffer_file.h"
#include "core/sync/lock_policy.h"
#include "core/sync/policy_mutex.h"
#include "core/sync/thread_annotations.h"
#include "core/timer.h"
#include "core/trace_events.h"

namespace cused::core::alloc {

// S1.4: only the first 4 MiB of a larger mapping are used.
inline constexpr std::size_t kMaxBufferSpace = std::size_t{4} << 20;

// S4.10: ALIGN(data,8) + ALIGN(offsets,8) + ALIGN(extra,8), at least 8; 0 when the sum
// overflows (the caller answers EINVAL).
std::size_t sanitized_size(std::size_t data_size, std::size_t offsets_size,
                           std::size_t extra_buffers_size);

struct AllocatorOptions {
  pid_t pid = 0;  // the proc's pid, for log lines
  // Receives the lines the kernel logs at its default debug level (BINDER_DEBUG_USER_ERROR):
  // "no vma", "no address space" with the totals of S9.8, "spamming oneway?" (S9.7).
  // Called without allocator locks held. Empty: lines are dropped.
  std::function<void(std::string_view)> log;
  // lock_policy= of the device variant: how the allocator's sleeping locks (the metadata lock of
  // alloc_lock=mutex, the install lock of alloc_lock=spin-install) behave under contention.
  sync::LockPolicy lock_policy = sync::LockPolicy::kBarging;
  // install_latency_us= of the device variant: what installing one page costs on top of the
  // memfd's own cost, slept with the install lock held (under alloc_lock=mutex that is the
  // allocator's one lock). A phone's page allocator under memory pressure enters direct reclaim
  // and sleeps there; this machine's rarely does, so a lock held across installation never
  // matters here unless the cost is put back (docs/reproductions.md).
  std::chrono::microseconds install_latency{0};
  // What sleeps that cost: the Driver's timer (core/timer.h); needed when install_latency > 0.
  Timer* timer = nullptr;
};

// The answer to new_buffer(): a buffer, or the kernel's -errno.
struct NewBufferResult {
  Buffer* buffer = nullptr;
  // 0; -ESRCH not mapped (S1.6/S1.7: BR_DEAD_REPLY); -EINVAL size overflow (S4.10);
  // -ENOSPC no free buffer large enough, or a oneway beyond the async budget (S9.6);
  // -ENOMEM the memfd could not get a page (S9.5).
  int error = 0;
  explicit operator bool() const { return buffer != nullptr; }
};

// The answer to prepare_to_free() (S9.9). Both failures are soft errors for the engine: log,
// consume the command, carry on.
struct FreeLookup {
  Buffer* buffer = nullptr;
  // 0; -ENOENT no allocated buffer starts at that address (the kernel's "no match", also for
  // interior pointers); -EPERM the buffer was never handed to userspace or is already being freed
  // (the kernel's "unreturned or currently freeing").
  int error = 0;
  explicit operator bool() const { return buffer != nullptr; }
};

struct PageCounts {
  std::size_t active = 0;
  std::size_t lru = 0;
  std::size_t free = 0;
};

struct AllocatorStats : SpaceTotals {
  std::size_t size = 0;  // the buffer space, 0 before map()
  std::size_t free_async_space = 0;
  PageCounts pages;            // S9.12 "pages: active:lru:free"
  std::size_t pages_high = 0;  // S9.12: highest page index ever installed + 1
  std::size_t page_metadata_bytes = 0;
  // spin_install: allocations that met a page the shrinker had isolated, rolled back and waited.
  std::uint64_t reclaim_conflicts = 0;
};

// S9.8: "allocated: N (num: N largest: N), free: N (num: N largest: N)".
std::string format_totals(const SpaceTotals& totals);

class Allocator final : public PageOwner {
 public:
  Allocator(BufferFile& file, Variant variant, PageLru& lru, AllocatorOptions options = {});
  // Runs release().
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  const Variant& variant() const { return variant_; }
  sync::LockPolicy lock_policy() const { return options_.lock_policy; }
  // The policy each sleeping lock was built with (what lock_policy= reached); for tests.
  sync::LockPolicy metadata_lock_policy() const { return lock_.policy(); }
  sync::LockPolicy install_lock_policy() const { return install_lock_.policy(); }
  std::size_t page_size() const { return page_size_; }

  // S1.4: the client mapped `vma_length` bytes at `vm_start`; the space becomes
  // min(vma_length, 4 MiB) (and never more than the BufferFile). Returns 0, -EBUSY when this
  // proc was mapped before (even if unmapped since), -EINVAL when less than one page.
  int map(std::size_t vma_length, std::uint64_t vm_start = 0) CUSED_EXCLUDES(lock_);
  // S1.6: later allocations fail with -ESRCH; existing buffers can still be freed.
  void unmap();
  bool is_mapped() const { return mapped_.load(std::memory_order_acquire); }
  std::size_t size() const CUSED_EXCLUDES(lock_);
  std::uint64_t vm_start() const { return vm_start_.load(std::memory_order_relaxed); }

  // A buffer for a transaction carrying `data_size` bytes of data, `offsets_size` of offsets and
  // `extra_buffers_size` of sg buffers and security context (S4.10), oneway when `is_async`,
  // sent by thread group `sender_pid`. Pages the buffer covers are installed before it returns.
  // For a oneway, check buffer->oneway_spam_suspect() afterwards (S9.7).
  NewBufferResult new_buffer(std::size_t data_size, std::size_t offsets_size,
                             std::size_t extra_buffers_size, bool is_async, pid_t sender_pid)
      CUSED_EXCLUDES(lock_);

  // S9.9: the buffer BC_FREE_BUFFER names, by the client's address or by offset in the space.
  // Only an exact start matches, and only a buffer whose allow_user_free is set; the flag is
  // cleared here, so a second BC_FREE_BUFFER for the same buffer gets -EPERM.
  FreeLookup prepare_to_free(std::uint64_t user_address) CUSED_EXCLUDES(lock_);
  FreeLookup prepare_to_free_offset(std::size_t offset) CUSED_EXCLUDES(lock_);
  // Returns the buffer's space (S9.4) and its pages to the LRU (S9.5); zeroes it first when
  // clear_on_free is set (S9.10). `buffer` must be allocated here; it is gone afterwards.
  // The engine must have dropped its transaction pointer first.
  void free_buffer(Buffer& buffer) CUSED_EXCLUDES(lock_);

  // Where the client sees the buffer: vm_start + offset.
  std::uint64_t user_address(const Buffer& buffer) const { return vm_start() + buffer.offset(); }
  // The buffer's bytes in the daemon's mapping of the memfd: the engine's hot path (copy sender
  // data straight in with process_vm_readv). Valid while the buffer is allocated; all of it is
  // backed by installed pages.
  std::span<std::byte> contents(const Buffer& buffer) const {
    return {file_.data() + buffer.offset(), buffer.size()};
  }
  // Bounds-checked copies (the kernel's binder_alloc_copy_{to,from}_buffer): `buffer_offset`
  // must be 4-aligned and [buffer_offset, +bytes) inside the buffer. Returns 0 or -EINVAL.
  int copy_to_buffer(const Buffer& buffer, std::size_t buffer_offset, const void* src,
                     std::size_t bytes) const;
  int copy_from_buffer(const Buffer& buffer, std::size_t buffer_offset, void* dst,
                       std::size_t bytes) const;

  AllocatorStats stats() const CUSED_EXCLUDES(lock_);
  std::size_t allocated_count() const CUSED_EXCLUDES(lock_);
  // S9.12 state of one page (index < size() / page_size()).
  PageState page_state(std::size_t index) const CUSED_EXCLUDES(lock_);
  // The states of pages [0, out.size()) in one go (pages past the space read as free).
  void page_states(std::span<PageState> out) const CUSED_EXCLUDES(lock_);
  // Visits allocated buffers in address order, under the allocator's lock (for binder_logs);
  // `visit` must not call back into the allocator.
  void for_each_allocated(const std::function<void(const Buffer&)>& visit) const
      CUSED_EXCLUDES(lock_);

  // S1.9 step 8: frees every buffer (zeroing TF_CLEAR_BUF ones), takes the pages off the LRU,
  // waits for a reclaim in progress on them, and punches the whole space. Idempotent; later
  // allocations fail with -ESRCH.
  void release() CUSED_EXCLUDES(lock_);

 private:
  // The pages one allocation covers, collected under the lock and installed after it. 16 inline
  // (buffers up to 60 KiB, nearly all binder traffic) means no heap allocation on the hot path;
  // std::vector would allocate for every buffer.
  using PageRun = boost::container::small_vector<Page*, 16>;
  struct Attempt;
  struct Request {
    std::size_t size;  // sanitized
    std::size_t data_size, offsets_size, extra_buffers_size;
    bool is_async;
    pid_t sender_pid;
  };

  std::size_t first_page(const Buffer& buffer) const { return buffer.offset() / page_size_; }
  std::size_t last_page(const Buffer& buffer) const {
    return (buffer.offset() + buffer.size() - 1) / page_size_;
  }

  Attempt try_new_buffer(const Request& request, std::unique_ptr<BufferNode>& spare)
      CUSED_EXCLUDES(lock_);
  Attempt new_buffer_locked(const Request& request, std::unique_ptr<BufferNode>& spare)
      CUSED_REQUIRES(lock_);
  // One more user for each page of `run` (pages first, first + 1, ...): pages leave the LRU,
  // free pages are left for installation. False (and nothing changed) when spin_install meets a
  // page the shrinker has isolated.
  bool take_pages(std::size_t first, const PageRun& run) CUSED_REQUIRES(lock_);
  // Drops one user of pages [first, end); pages nobody uses any more go on the LRU.
  void put_pages(std::size_t first, std::size_t end) CUSED_REQUIRES(lock_);
  void put_pages_locked_lru(std::size_t first, std::size_t end) CUSED_REQUIRES(lock_, lru_.lock_);
  int install_pages(const PageRun& run);
  // binder_lru_page_class events for pages [first, first + count).
  void trace_pages(TraceEventType type, std::size_t first, std::size_t count) const;
  static bool all_installed(const PageRun& run);
  PageState page_state_locked(const Page* page) const CUSED_REQUIRES(lock_, lru_.lock_);
  bool low_async_space_locked(pid_t sender_pid, std::string& warning) CUSED_REQUIRES(lock_);
  void free_locked(BufferNode& node) CUSED_REQUIRES(lock_);
  void clear_buffer(const Buffer& buffer) const;
  FreeLookup prepare_to_free_locked(std::size_t offset) CUSED_REQUIRES(lock_);
  void wait_for_reclaims() CUSED_EXCLUDES(lock_);
  void emit(std::string_view line) const;

  // The shrinker's side (binder_alloc_free_page), called by PageLru::reclaim. begin_reclaim
  // runs under the LRU lock, try-locks what the variant prescribes and isolates the page;
  // finish_reclaim punches it and releases those locks. The locks are held across the two
  // calls, which the analysis cannot follow.
  bool begin_reclaim(Page& page) override;          // under lru_.lock_
  std::size_t finish_reclaim(Page& page) override;  // without it

  BufferFile& file_;
  const Variant variant_;
  PageLru& lru_;
  const AllocatorOptions options_;
  const std::size_t page_size_;

  std::atomic<bool> mapped_{false};
  std::atomic<std::uint64_t> vm_start_{0};
  // Installation may run outside lock_ (spin variants).
  std::atomic<std::size_t> pages_high_{0};

  mutable AllocLock lock_;
  // spin_install only: serializes page installation with the shrinker's clear-and-punch.
  // Never taken with lock_ held.
  InstallLock install_lock_;
  RangeAlloc space_ CUSED_GUARDED_BY(lock_);
  PageTable pages_ CUSED_GUARDED_BY(lock_);
  std::size_t buffer_size_ CUSED_GUARDED_BY(lock_) = 0;
  std::size_t free_async_space_ CUSED_GUARDED_BY(lock_) = 0;
  bool oneway_spam_detected_ CUSED_GUARDED_BY(lock_) = false;
  std::uint64_t reclaim_conflicts_ CUSED_GUARDED_BY(lock_) = 0;
  bool ever_mapped_ CUSED_GUARDED_BY(lock_) = false;
  bool released_ CUSED_GUARDED_BY(lock_) = false;
  // Reclaims of this allocator's pages between begin_reclaim and the end of finish_reclaim;
  // release() waits for zero before the allocator may go away.
  std::size_t reclaims_in_flight_ CUSED_GUARDED_BY(lru_.lock_) = 0;
  bool detached_ CUSED_GUARDED_BY(lru_.lock_) = false;
};

}  // namespace cused::core::alloc
