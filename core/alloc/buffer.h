// SPDX-License-Identifier: GPL-2.0-only
// One transaction buffer in a proc's buffer space (the kernel's binder_buffer): a contiguous,
// 8-aligned sub-range of [0, size) that the allocator hands to the protocol engine.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/trace_events.h"

namespace cused::core::alloc {

template <typename MetadataLock>
class PageSpace;
class KernelAllocator;

class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // Set by the allocator; stable while the buffer is allocated.
  // Start in the buffer space: the client sees it at vm_start + offset().
  std::size_t offset() const { return offset_; }
  // The sanitized total of S4.10: ALIGN(data,8) + ALIGN(offsets,8) + ALIGN(extra,8), at least 8.
  // Also the buffer's capacity: the next buffer starts right after it.
  std::size_t size() const { return size_; }
  std::size_t data_size() const { return data_size_; }
  std::size_t offsets_size() const { return offsets_size_; }
  std::size_t extra_buffers_size() const { return extra_buffers_size_; }
  bool async_transaction() const { return async_transaction_; }
  // S9.7: this oneway allocation tripped the spam heuristic; the sender should get
  // BR_ONEWAY_SPAM_SUSPECT instead of BR_TRANSACTION_COMPLETE if its proc enabled detection.
  bool oneway_spam_suspect() const { return oneway_spam_suspect_; }
  pid_t pid() const { return pid_; }  // the sender's thread group (S9.7)

  // Written by the protocol engine, read back by it (the kernel's binder_buffer.debug_id,
  // .clear_on_free, .allow_user_free); accessors so that a foreign allocator's buffer can stand
  // behind this handle. The transaction and node a buffer serves live in the engine's own
  // BufferState, not here.
  std::uint32_t debug_id() const { return debug_id_; }
  void set_debug_id(std::uint32_t id) { debug_id_ = id; }
  // S9.10 (TF_CLEAR_BUF): zero the whole buffer when it is freed, also at teardown.
  bool clear_on_free() const { return clear_on_free_; }
  void set_clear_on_free(bool clear) { clear_on_free_ = clear; }
  // S9.9 / S11.1: set once the buffer has been handed to userspace by a read.
  // Allocator::prepare_to_free() accepts the buffer only while it is set and clears it, so a
  // buffer cannot be freed before delivery, or twice. Atomic because a hostile client may send
  // BC_FREE_BUFFER for a guessed address while the engine is delivering the buffer.
  bool allow_user_free() const { return allow_user_free_.load(std::memory_order_acquire); }
  void set_allow_user_free() { allow_user_free_.store(true, std::memory_order_release); }
  // prepare_to_free's test-and-clear: true when the flag was set.
  bool take_allow_user_free() {
    return allow_user_free_.exchange(false, std::memory_order_acq_rel);
  }

 private:
  template <typename MetadataLock>
  friend class PageSpace;
  friend class RangeAlloc;
  friend class KernelAllocator;
  std::size_t offset_ = 0;
  std::size_t size_ = 0;
  std::size_t data_size_ = 0;
  std::size_t offsets_size_ = 0;
  std::size_t extra_buffers_size_ = 0;
  pid_t pid_ = 0;
  bool async_transaction_ = false;
  bool oneway_spam_suspect_ = false;
  std::uint32_t debug_id_ = 0;
  bool clear_on_free_ = false;
  std::atomic<bool> allow_user_free_{false};
};

// binder_buffer_class (binder_transaction_alloc_buf, _buffer_release, _failed_buffer_release):
// a buffer's sizes under its transaction's id.
inline void trace_buffer(TraceEventType type, const Buffer& buffer) {
  trace::emit(type, buffer.debug_id(), buffer.data_size(), buffer.offsets_size(),
              buffer.extra_buffers_size());
}

}  // namespace cused::core::alloc
