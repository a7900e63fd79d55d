// SPDX-License-Identifier: GPL-2.0-only
// What cused's allocator designs share (core/alloc/designs/*): the buffer tiling of one proc's
// space (RangeAlloc), its page table, the pages' trips on and off the global PageLru, page
// installation through BufferFile::populate, the trace events, the stats, binder_logs' walk and
// the teardown. A design derives from PageSpace<its metadata lock type> and writes only its
// locking and ordering: new_buffer() (which steps run under which lock, and where pages are
// installed) and reclaim_page() (what the shrinker try-locks and holds across the punch).
//
// The building blocks, and the locks each needs (lock order everywhere: the metadata lock_, then
// a design's own locks such as an install lock, then PageLru::lock()):
//   admit()           new_buffer's checks before any lock (mapped, S4.10 size)
//   reserve()         runs a design's pass under its locks, allocating the split's node outside
//                     them and retrying when the pass asks to (the kernel's slab and retry loops)
//   reserve_locked()  S9.6 async budget, S9.2 best fit, S9.3 split, the covered pages (lock_)
//   take_pages_locked() each covered page gains a user and leaves the LRU (lock_)
//   undo_locked()     the exact undo of reserve_locked after take_pages_locked refused (lock_)
//   commit_locked()   the buffer's fields, the async budget, S9.7 spam detection (lock_)
//   install_pages()   populates the pages not installed yet (no lock of its own)
//   free_locked()     S9.4, S9.5, S9.6: the buffer's space and pages back (lock_)
//   answer()          emits the log lines and makes new_buffer's result
//   isolate_locked(), punch(), end_reclaim_locked(): the shrinker's steps (PageLru::lock() where
//                     named _locked)
#pragma once

#include <sys/types.h>

#include <atomic>
#include <boost/container/small_vector.hpp>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "core/alloc/allocator.h"
#include "core/alloc/page.h"
#include "core/alloc/page_lru.h"
#include "core/alloc/page_table.h"
#include "core/alloc/range_alloc.h"
#include "core/buffer_file.h"
#include "core/sync/lock_guard.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

template <typename MetadataLock>
class PageSpace : public Allocator, public PageOwner {
 public:
  // A design inherits this constructor; `trace_id` is the design's (cused_lock_*, registry).
  PageSpace(BufferFile& file, Variant variant, PageLru& lru, AllocatorOptions options,
            std::uint8_t trace_id);
  // Runs release() (again: each design's destructor runs it first, while its own locks exist).
  ~PageSpace() override;

  const Variant& variant() const final { return variant_; }
  std::size_t page_size() const final { return page_size_; }

  int map(std::size_t vma_length, std::uint64_t vm_start) final CUSED_EXCLUDES(lock_);
  void unmap() final;
  bool is_mapped() const final { return mapped_.load(std::memory_order_acquire); }
  std::size_t size() const final CUSED_EXCLUDES(lock_);
  std::uint64_t vm_start() const final { return vm_start_.load(std::memory_order_relaxed); }

  FreeLookup prepare_to_free(std::uint64_t user_address) final CUSED_EXCLUDES(lock_);
  FreeLookup prepare_to_free_offset(std::size_t offset) final CUSED_EXCLUDES(lock_);
  void free_buffer(Buffer& buffer) final CUSED_EXCLUDES(lock_);

  std::uint64_t user_address(const Buffer& buffer) const final {
    return vm_start() + buffer.offset();
  }
  std::span<std::byte> contents(const Buffer& buffer) const final {
    return {file_.data() + buffer.offset(), buffer.size()};
  }
  int copy_to_buffer(const Buffer& buffer, std::size_t buffer_offset, const void* src,
                     std::size_t bytes) const final;
  int copy_from_buffer(const Buffer& buffer, std::size_t buffer_offset, void* dst,
                       std::size_t bytes) const final;

  AllocatorStats stats() const final CUSED_EXCLUDES(lock_);
  std::size_t allocated_count() const final CUSED_EXCLUDES(lock_);
  PageState page_state(std::size_t index) const final CUSED_EXCLUDES(lock_);
  void page_states(std::span<PageState> out) const final CUSED_EXCLUDES(lock_);
  void for_each_allocated(const std::function<void(const Buffer&)>& visit) const final
      CUSED_EXCLUDES(lock_);
  void release() final CUSED_EXCLUDES(lock_);

  std::size_t page_bytes() const final { return page_size_; }

 protected:
  // The pages one allocation covers, collected under the lock and installed under it or after it
  // as the design says. 16 inline (buffers up to 60 KiB, nearly all binder traffic) means no heap
  // allocation on the hot path; std::vector would allocate for every buffer.
  using PageRun = boost::container::small_vector<Page*, 16>;

  struct Request {
    std::size_t size;  // sanitized
    std::size_t data_size, offsets_size, extra_buffers_size;
    bool is_async;
    pid_t sender_pid;
  };

  // What one pass of a design under its metadata lock produced.
  struct Reservation {
    BufferNode* node = nullptr;
    int error = 0;
    bool retry = false;       // the design rolled back and wants another pass (after its wait)
    bool needs_node = false;  // the split needs a node and none is left: allocate one, try again
    PageRun pages;            // every page the buffer covers
    std::size_t first_page = 0;
    boost::container::small_vector<std::string, 2> log;
  };

  // What take_pages_locked does with a page the shrinker has isolated (off the LRU, not punched
  // yet).
  enum class OnIsolated : std::uint8_t {
    // Take it as a free page and install it afresh: right where the shrinker holds the metadata
    // lock across the punch (it cannot be met then), wrong (the racy design) where it does not.
    take,
    // Give back what was taken and report it: the caller rolls back and waits for the shrinker.
    refuse,
  };

  const AllocatorOptions& options() const { return options_; }

  // new_buffer's checks before any lock: not mapped (-ESRCH, logged "no vma", S1.6) or a size
  // that overflows (-EINVAL, S4.10). 0 and `request` filled otherwise.
  int admit(std::size_t data_size, std::size_t offsets_size, std::size_t extra_buffers_size,
            bool is_async, pid_t sender_pid, Request& request) const;

  // Runs `pass(spare)` until it neither needs a node nor asks for a retry: a node a split needs
  // is allocated here, outside every lock, like the kernel's; `wait()` runs between a pass that
  // asked for a retry and the next. A failed allocation of the node or of lazy page metadata
  // happens before anything changed and answers -ENOMEM (S9.5).
  template <typename Pass, typename Wait>
  Reservation reserve(Pass&& pass, Wait&& wait) {
    try {
      std::unique_ptr<BufferNode> spare;
      for (;;) {
        Reservation reservation = pass(spare);
        if (reservation.needs_node) {
          spare = std::make_unique<BufferNode>();
          continue;
        }
        if (!reservation.retry) return reservation;
        wait();
      }
    } catch (const std::bad_alloc&) {
      Reservation failed;
      failed.error = -ENOMEM;
      return failed;
    }
  }

  Reservation reserve_locked(const Request& request, std::unique_ptr<BufferNode>& spare)
      CUSED_REQUIRES(lock_);
  // binder_lru_freelist_del: one more user for each covered page; pages leave the LRU, free pages
  // are left for installation. False (and nothing taken) when `on_isolated` is refuse and a page
  // is isolated.
  bool take_pages_locked(const Reservation& reservation, OnIsolated on_isolated)
      CUSED_REQUIRES(lock_);
  // Undoes reserve_locked's split (take_pages_locked refused, so no page was taken).
  void undo_locked(Reservation& reservation) CUSED_REQUIRES(lock_);
  void commit_locked(Reservation& reservation, const Request& request) CUSED_REQUIRES(lock_);
  // Populates every page of `run` not installed yet, a run of consecutive missing pages per
  // system call. Returns 0, -ESRCH (unmapped meanwhile) or -ENOMEM. Designs that install outside
  // their metadata lock may run it concurrently on a shared page: populating a page another
  // installer populated first leaves that page alone and succeeds (BufferFile::populate), which is
  // how the kernel treats vm_insert_page's -EBUSY.
  int install_pages(const PageRun& run);
  static bool all_installed(const PageRun& run);
  void free_locked(BufferNode& node) CUSED_REQUIRES(lock_);
  // Emits the reservation's log lines (without locks) and answers new_buffer.
  NewBufferResult answer(const Reservation& reservation) const;
  // answer() for a design that installs the pages after dropping lock_: a failed installation
  // (`install_error`) frees the buffer again first.
  NewBufferResult answer_installed(Reservation& reservation, int install_error)
      CUSED_EXCLUDES(lock_);

  // The shrinker's reclaim of one page for the designs that serialize it with installation by
  // one lock (binder_alloc_free_page): try-lock `lock` (skipped when busy), isolate the page, drop
  // the LRU lock, clear and punch the page holding `lock`, take the LRU lock back, release `lock`.
  template <typename Lock>
  ReclaimStep reclaim_holding(Lock& lock, Page& page, const ReclaimHook& hook)
      CUSED_REQUIRES(lru_.lock()) CUSED_EXCLUDES(lock) {
    if (detached_ || !lock.try_lock()) return ReclaimStep::skipped;
    isolate_locked(page);
    lru_.lock().unlock();
    page.set_installed(false);
    punch(page, hook);
    lru_.lock().lock();
    lru_.end_isolation(page);
    lock.unlock();
    return end_reclaim_locked();
  }

  // The shrinker's steps, for a design that orders them its own way: try-lock its lock,
  // isolate_locked(), drop the LRU lock, punch(), take the LRU lock, end_isolation_locked(),
  // release its lock, end_reclaim_locked().
  bool detached_locked() const CUSED_REQUIRES(lru_.lock()) { return detached_; }
  void isolate_locked(Page& page) CUSED_REQUIRES(lru_.lock());
  // binder_alloc_free_page's zap: the hole takes the page out of the client's mapping. Runs the
  // test hook first, with whatever locks the design holds there.
  void punch(Page& page, const ReclaimHook& hook);
  void end_isolation_locked(Page& page) CUSED_REQUIRES(lru_.lock()) { lru_.end_isolation(page); }
  // The last touch of this allocator by the reclaim: release() may destroy it once the caller
  // drops the LRU lock.
  ReclaimStep end_reclaim_locked() CUSED_REQUIRES(lru_.lock());

  // The stats a design adds to the shared ones (e.g. reclaim_conflicts).
  virtual void add_design_stats_locked(AllocatorStats& /*stats*/) const CUSED_REQUIRES(lock_) {}

  BufferFile& file_;
  PageLru& lru_;
  // The metadata lock: guards the tiling, the page table and the budget below.
  mutable MetadataLock lock_;

 private:
  std::size_t first_page(const Buffer& buffer) const { return buffer.offset() / page_size_; }
  std::size_t last_page(const Buffer& buffer) const {
    return (buffer.offset() + buffer.size() - 1) / page_size_;
  }
  // binder_lru_freelist_add: drops one user of pages [first, end); pages nobody uses any more go
  // on the LRU.
  void put_pages(std::size_t first, std::size_t end) CUSED_REQUIRES(lock_);
  void put_pages_locked_lru(std::size_t first, std::size_t end) CUSED_REQUIRES(lock_, lru_.lock());
  // binder_lru_page_class events for pages [first, first + count).
  void trace_pages(TraceEventType type, std::size_t first, std::size_t count) const;
  PageState page_state_locked(const Page* page) const CUSED_REQUIRES(lock_, lru_.lock());
  bool low_async_space_locked(pid_t sender_pid, std::string& warning) CUSED_REQUIRES(lock_);
  void clear_buffer(const Buffer& buffer) const;
  FreeLookup prepare_to_free_locked(std::size_t offset) CUSED_REQUIRES(lock_);
  void wait_for_reclaims() CUSED_EXCLUDES(lock_);
  void emit(std::string_view line) const;

  const Variant variant_;
  const AllocatorOptions options_;
  const std::size_t page_size_;

  std::atomic<bool> mapped_{false};
  std::atomic<std::uint64_t> vm_start_{0};
  // Installation may run outside lock_.
  std::atomic<std::size_t> pages_high_{0};

  RangeAlloc space_ CUSED_GUARDED_BY(lock_);
  PageTable pages_ CUSED_GUARDED_BY(lock_);
  std::size_t buffer_size_ CUSED_GUARDED_BY(lock_) = 0;
  std::size_t free_async_space_ CUSED_GUARDED_BY(lock_) = 0;
  bool oneway_spam_detected_ CUSED_GUARDED_BY(lock_) = false;
  bool ever_mapped_ CUSED_GUARDED_BY(lock_) = false;
  bool released_ CUSED_GUARDED_BY(lock_) = false;
  // Reclaims of this allocator's pages between isolate_locked and end_reclaim_locked; release()
  // waits for zero before the allocator may go away.
  std::size_t reclaims_in_flight_ CUSED_GUARDED_BY(lru_.lock()) = 0;
  bool detached_ CUSED_GUARDED_BY(lru_.lock()) = false;
};

}  // namespace cused::core::alloc
