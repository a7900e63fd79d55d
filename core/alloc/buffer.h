// One transaction buffer in a proc's buffer space (the kernel's binder_buffer): a contiguous,
// 8-aligned sub-range of [0, size) that the allocator hands to the protocol engine.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/trace_events.h"

namespace cused::core::alloc {

class Allocator;

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

  // Owned by the protocol engine. The allocator never reads `transaction` or `target_node`;
  // they are the kernel's binder_buffer.transaction / .target_node, kept here so that the engine
  // can get from a BC_FREE_BUFFER address to its transaction and node without a second lookup.
  void* transaction = nullptr;
  void* target_node = nullptr;
  std::uint32_t debug_id = 0;
  // S9.10 (TF_CLEAR_BUF): zero the whole buffer when it is freed, also at teardown.
  bool clear_on_free = false;
  // S9.9 / S11.1: the engine sets this once the buffer has been handed to userspace by a read.
  // Allocator::prepare_to_free() accepts the buffer only while it is set and clears it, so a
  // buffer cannot be freed before delivery, or twice. Atomic because a hostile client may send
  // BC_FREE_BUFFER for a guessed address while the engine is delivering the buffer.
  std::atomic<bool> allow_user_free{false};

 private:
  friend class Allocator;
  friend class RangeAlloc;
  std::size_t offset_ = 0;
  std::size_t size_ = 0;
  std::size_t data_size_ = 0;
  std::size_t offsets_size_ = 0;
  std::size_t extra_buffers_size_ = 0;
  pid_t pid_ = 0;
  bool async_transaction_ = false;
  bool oneway_spam_suspect_ = false;
};

// binder_buffer_class (binder_transaction_alloc_buf, _buffer_release, _failed_buffer_release):
// a buffer's sizes under its transaction's id.
inline void trace_buffer(TraceEventType type, const Buffer& buffer) {
  trace::emit(type, buffer.debug_id, buffer.data_size(), buffer.offsets_size(),
              buffer.extra_buffers_size());
}

}  // namespace cused::core::alloc
