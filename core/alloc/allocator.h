// SPDX-License-Identifier: GPL-2.0-only
// The allocator seam: what the protocol engine asks of one proc's buffer allocator (the kernel's
// binder_alloc; spec S9, S11.10, S11.11; docs/design.md section 4). Each design (alloc_lock=) is
// one implementation of this interface under core/alloc/designs/, made by the registry
// (designs/registry.h); the engine makes one virtual call per operation and never sees which
// design it talks to. cused's own designs tile the proc's buffer space [0, size) with buffers,
// install pages of the proc's memfd (BufferFile) when buffers need them, park pages no buffer
// uses on the global PageLru and let the shrinker punch those pages out of the memfd
// (page_space.h holds what they share).
//
// The contract with the protocol engine:
//   * make one per proc (make_allocator in designs/registry.h) with the proc's BufferFile, a
//     Variant and the daemon's PageLru;
//   * map() once the client's mapping is known, unmap() when it goes (S1.4, S1.6);
//   * new_buffer() for every transaction or reply to this proc; write the payload through
//     contents() (the daemon's mapping of the memfd, pages already installed);
//   * Buffer::set_allow_user_free() when the buffer is handed to userspace by a read;
//   * BC_FREE_BUFFER: prepare_to_free(address), release the objects, then free_buffer();
//   * destruction (or release()) frees everything (S1.9 step 8).
// Every method is thread-safe. A Buffer stays valid from new_buffer() until free_buffer().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/alloc/buffer.h"
#include "core/alloc/page.h"
#include "core/alloc/range_alloc.h"
#include "core/alloc/variant.h"
#include "core/sync/lock_policy.h"
#include "core/timer.h"

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
  // lock_policy= of the device variant: how the design's sleeping locks (the metadata mutex of
  // alloc_lock=mutex and upstream, the install lock of spin-install) behave under contention.
  sync::LockPolicy lock_policy = sync::LockPolicy::kBarging;
  // install_latency_us= of the device variant: what installing one page costs on top of the
  // memfd's own cost, slept with whatever lock the design installs under (alloc_lock=mutex: the
  // allocator's one lock; spin-install: the install lock; spin and upstream: none). A phone's page
  // allocator under memory pressure enters direct reclaim and sleeps there; this machine's rarely
  // does, so a lock held across installation never matters here unless the cost is put back
  // (docs/reproductions.md).
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
  // Allocations that met a page the shrinker had isolated, rolled back and waited (the designs
  // that roll back: spin-install).
  std::uint64_t reclaim_conflicts = 0;
};

// S9.8: "allocated: N (num: N largest: N), free: N (num: N largest: N)".
std::string format_totals(const SpaceTotals& totals);

class Allocator {
 public:
  virtual ~Allocator() = default;
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  virtual const Variant& variant() const = 0;
  // The policy this allocator's sleeping locks were built with (what lock_policy= reached), for
  // tests; nullopt when the design has no sleeping lock (spin).
  virtual std::optional<sync::LockPolicy> sleeping_lock_policy() const = 0;
  virtual std::size_t page_size() const = 0;

  // S1.4: the client mapped `vma_length` bytes at `vm_start`; the space becomes
  // min(vma_length, 4 MiB) (and never more than the BufferFile). Returns 0, -EBUSY when this
  // proc was mapped before (even if unmapped since), -EINVAL when less than one page.
  virtual int map(std::size_t vma_length, std::uint64_t vm_start = 0) = 0;
  // S1.6: later allocations fail with -ESRCH; existing buffers can still be freed.
  virtual void unmap() = 0;
  virtual bool is_mapped() const = 0;
  virtual std::size_t size() const = 0;
  virtual std::uint64_t vm_start() const = 0;

  // A buffer for a transaction carrying `data_size` bytes of data, `offsets_size` of offsets and
  // `extra_buffers_size` of sg buffers and security context (S4.10), oneway when `is_async`,
  // sent by thread group `sender_pid`. Pages the buffer covers are installed before it returns.
  // For a oneway, check buffer->oneway_spam_suspect() afterwards (S9.7).
  virtual NewBufferResult new_buffer(std::size_t data_size, std::size_t offsets_size,
                                     std::size_t extra_buffers_size, bool is_async,
                                     pid_t sender_pid) = 0;

  // S9.9: the buffer BC_FREE_BUFFER names, by the client's address or by offset in the space.
  // Only an exact start matches, and only a buffer whose allow_user_free is set; the flag is
  // cleared here, so a second BC_FREE_BUFFER for the same buffer gets -EPERM.
  virtual FreeLookup prepare_to_free(std::uint64_t user_address) = 0;
  virtual FreeLookup prepare_to_free_offset(std::size_t offset) = 0;
  // Returns the buffer's space (S9.4) and its pages to the LRU (S9.5); zeroes it first when
  // clear_on_free is set (S9.10). `buffer` must be allocated here; it is gone afterwards.
  // The engine must have dropped its transaction pointer first.
  virtual void free_buffer(Buffer& buffer) = 0;

  // Where the client sees the buffer: vm_start + offset.
  virtual std::uint64_t user_address(const Buffer& buffer) const = 0;
  // The buffer's bytes in the daemon's mapping of the memfd: the engine's hot path (copy sender
  // data straight in with process_vm_readv). Valid while the buffer is allocated; all of it is
  // backed by installed pages.
  virtual std::span<std::byte> contents(const Buffer& buffer) const = 0;
  // Bounds-checked copies (the kernel's binder_alloc_copy_{to,from}_buffer): `buffer_offset`
  // must be 4-aligned and [buffer_offset, +bytes) inside the buffer. Returns 0 or -EINVAL.
  virtual int copy_to_buffer(const Buffer& buffer, std::size_t buffer_offset, const void* src,
                             std::size_t bytes) const = 0;
  virtual int copy_from_buffer(const Buffer& buffer, std::size_t buffer_offset, void* dst,
                               std::size_t bytes) const = 0;

  virtual AllocatorStats stats() const = 0;
  virtual std::size_t allocated_count() const = 0;
  // S9.12 state of one page (index < size() / page_size()).
  virtual PageState page_state(std::size_t index) const = 0;
  // The states of pages [0, out.size()) in one go (pages past the space read as free).
  virtual void page_states(std::span<PageState> out) const = 0;
  // Visits allocated buffers in address order, under the allocator's lock (for binder_logs);
  // `visit` must not call back into the allocator.
  virtual void for_each_allocated(const std::function<void(const Buffer&)>& visit) const = 0;
  // binder_logs' "  pages: A:L:F" and "  pages high watermark: N" lines (S9.12) as the design's
  // own code prints them: a kernel design's are its file's binder_alloc_print_pages. Empty for
  // cused's designs, whose lines binder_logs writes from stats().
  virtual std::string print_pages() const { return {}; }

  // S1.9 step 8: frees every buffer (zeroing TF_CLEAR_BUF ones), takes the pages off the LRU,
  // waits for a reclaim in progress on them, and punches the whole space. Idempotent; later
  // allocations fail with -ESRCH. Destruction runs it too. Only when no other thread can be in
  // new_buffer(): the designs that install pages outside their lock hold the new buffer
  // unlocked meanwhile, and release() would free it under them. The engine destroys a proc's
  // allocator with the proc, after the last reference a sender holds (as the kernel runs
  // binder_alloc_deferred_release from binder_free_proc, after the last tmp_ref).
  virtual void release() = 0;

 protected:
  Allocator() = default;
};

}  // namespace cused::core::alloc
