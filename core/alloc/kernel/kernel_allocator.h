// SPDX-License-Identifier: GPL-2.0-only
// A kernel design's allocator (alloc_lock=kernel:TREE): the Allocator seam over one proc's
// binder_alloc of a loaded kernel object (kernel_object.h). Every operation is the kernel file's
// own function (binder_alloc_new_buf, _prepare_to_free, _free_buf, _copy_*, _deferred_release,
// the shrinker's binder_alloc_free_page); this class translates cused's calls into them and the
// file's page and LRU operations (through kernel_runtime.h) into cused's memfd and PageLru:
//   vm_insert_page of page `i`  -> the memfd page `i` populated; the kernel's page is that page
//   zap of page `i`             -> the memfd page punched
//   list_lru_add / _del / isolate -> the global PageLru, which cused's shrinker thread walks
// The pages the kernel installs are memfd pages, so contents() is the daemon's mapping of them,
// as for cused's own designs (the engine copies the sender's data straight in).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/alloc/allocator.h"
#include "core/alloc/kernel/kernel_object.h"
#include "core/alloc/page.h"
#include "core/alloc/page_lru.h"
#include "core/buffer_file.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

// What the kernel's debug checks reported for one allocator (cused/kernel_shim/runtime.c).
struct KernelReports {
  unsigned long warn = 0;
  unsigned long atomic_sleep = 0;
  unsigned long leak = 0;
  unsigned long lock_leak = 0;
  unsigned long lock_order = 0;  // lockdep's inversions
  // The first reports' texts: at most kKeptReports, and the first of each kind.
  std::vector<std::string> first;
  static constexpr std::size_t kKeptReports = 16;
};

class KernelAllocator final : public Allocator, public PageOwner {
 public:
  KernelAllocator(const KernelObject& object, BufferFile& file, Variant variant, PageLru& lru,
                  AllocatorOptions options, std::uint8_t trace_id);
  ~KernelAllocator() override;

  const Variant& variant() const override { return variant_; }
  std::optional<sync::LockPolicy> sleeping_lock_policy() const override {
    return options_.lock_policy;
  }
  std::size_t page_size() const override { return page_size_; }

  int map(std::size_t vma_length, std::uint64_t vm_start) override;
  void unmap() override;
  bool is_mapped() const override { return mapped_.load(std::memory_order_acquire); }
  std::size_t size() const override { return size_.load(std::memory_order_acquire); }
  std::uint64_t vm_start() const override { return vm_start_.load(std::memory_order_acquire); }

  NewBufferResult new_buffer(std::size_t data_size, std::size_t offsets_size,
                             std::size_t extra_buffers_size, bool is_async,
                             pid_t sender_pid) override;
  FreeLookup prepare_to_free(std::uint64_t user_address) override;
  FreeLookup prepare_to_free_offset(std::size_t offset) override;
  void free_buffer(Buffer& buffer) override;

  std::uint64_t user_address(const Buffer& buffer) const override {
    return vm_start() + buffer.offset();
  }
  std::span<std::byte> contents(const Buffer& buffer) const override {
    return {file_.data() + buffer.offset(), buffer.size()};
  }
  int copy_to_buffer(const Buffer& buffer, std::size_t buffer_offset, const void* src,
                     std::size_t bytes) const override;
  int copy_from_buffer(const Buffer& buffer, std::size_t buffer_offset, void* dst,
                       std::size_t bytes) const override;

  AllocatorStats stats() const override;
  std::size_t allocated_count() const override;
  PageState page_state(std::size_t index) const override;
  void page_states(std::span<PageState> out) const override;
  void for_each_allocated(const std::function<void(const Buffer&)>& visit) const override;
  void release() override;

  // PageOwner: the shrinker's visit runs the file's binder_alloc_free_page.
  ReclaimStep reclaim_page(Page& page, const ReclaimHook& hook) override
      CUSED_REQUIRES(lru_.lock());
  std::size_t page_bytes() const override { return page_size_; }

  // binder_logs' "pages:" lines as the kernel's binder_alloc_print_pages writes them.
  std::string print_pages() const override;
  KernelReports reports() const;
  const KernelObject& object() const { return object_; }

  // The runtime's calls (kernel_runtime.cc), for page `index` of this space.
  int install_page(std::size_t index);
  void* page_address(std::size_t index) const { return file_.data() + index * page_size_; }
  void punch_page(std::size_t index);
  void lru_link(std::size_t index) CUSED_REQUIRES(lru_.lock());
  void lru_unlink(std::size_t index) CUSED_REQUIRES(lru_.lock());
  void lru_isolate(std::size_t index) CUSED_REQUIRES(lru_.lock());
  void trace(cused_ktrace event, std::size_t index) const;
  // binder_update_page_range, with the tracepoint's own offset and size.
  void trace_range(bool allocate, std::size_t offset, std::size_t size) const;
  // A line the file logged; emitted when the entry point returns (no lock held then).
  void log(std::string line);
  void report(cused_kreport kind, const char* text);
  PageLru& lru() const { return lru_; }
  std::uint8_t trace_id() const { return trace_id_; }

 private:
  class KernelBuffer;
  class LogScope;

  std::size_t pages_in_space() const { return size() / page_size_; }
  PageState page_state_locked(std::size_t index) const CUSED_REQUIRES(lru_.lock());
  KernelBuffer* wrap(cused_kbuf* kbuf, pid_t sender_pid);
  void flush_log();

  const KernelObject& object_;
  const cused_kabi& abi_;
  BufferFile& file_;
  PageLru& lru_;
  const Variant variant_;
  const AllocatorOptions options_;
  const std::uint8_t trace_id_;
  const std::size_t page_size_;
  // The address the kernel's vma starts at: the client's, or a stand-in when the caller maps at
  // 0 (tests), since the kernel's file treats 0 as "no mapping" in places.
  std::uint64_t kernel_base_ = 0;

  cused_kproc* proc_ = nullptr;  // null after release()
  std::atomic<bool> mapped_{false};
  std::atomic<bool> ever_mapped_{false};
  std::atomic<std::size_t> size_{0};
  std::atomic<std::uint64_t> vm_start_{0};
  std::vector<Page> pages_;  // one per page of the memfd: cused's view for its PageLru

  // The engine's handles of the allocated buffers, by offset (the kernel's allow_user_free is
  // mirrored from them at BC_FREE_BUFFER, prepare_to_free).
  mutable sync::SpinLock buffers_lock_;
  std::unordered_map<std::size_t, std::unique_ptr<KernelBuffer>> buffers_
      CUSED_GUARDED_BY(buffers_lock_);

  // Reclaims of this allocator's pages in flight (release waits for them), and whether release
  // has detached it from the LRU; both under lru_.lock().
  std::size_t reclaims_in_flight_ CUSED_GUARDED_BY(lru_.lock()) = 0;
  bool detached_ CUSED_GUARDED_BY(lru_.lock()) = false;

  mutable std::mutex reports_mutex_;
  KernelReports reports_;
};

}  // namespace cused::core::alloc
