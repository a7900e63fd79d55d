// SPDX-License-Identifier: GPL-2.0-only
// The engine's slab caches (the kernel's kmem_cache for binder_transaction and binder_work): a
// pool of freed blocks of one size, and make_pooled(), std::allocate_shared through it. An object
// made there lives in an ordinary shared_ptr (weak_ptr, shared_from_this and aliasing work as
// ever); when its last reference goes, its block goes back to the pool and the next object of
// its kind takes it, so a proc's steady stream of transactions allocates nothing.
//
// Why not Boost.Pool: its pools keep every block they ever handed out until the pool goes, so a
// burst (a client parking thousands of oneways) would stay allocated for the proc's lifetime, and
// they are not thread-safe, where a transaction's last reference may go on any daemon thread.
// This pool keeps at most kMaxKept blocks and gives the rest back to the heap. Under
// AddressSanitizer a kept block is poisoned, so a use after free of a pooled object is still
// reported.
#pragma once

#include <boost/container/static_vector.hpp>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

#include "core/sync/lock_guard.h"
#include "core/sync/spinlock.h"
#include "core/sync/thread_annotations.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif
#if !defined(ASAN_POISON_MEMORY_REGION)
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

namespace cused::core {

class BlockPool {
 public:
  static constexpr std::size_t kMaxKept = 16;

  BlockPool() = default;
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A block of `size` bytes aligned to `align`: a kept one when it has that size, else new.
  void* allocate(std::size_t size, std::size_t align) {
    {
      sync::LockGuard guard(lock_);
      if (size == size_ && align == align_ && !kept_.empty()) {
        void* block = kept_.back().release();
        kept_.pop_back();
        ASAN_UNPOISON_MEMORY_REGION(block, size);
        return block;
      }
    }
    return ::operator new (size, std::align_val_t{align});
  }

  // Keeps the block for the next allocate() of its size (the pool serves the one size
  // allocate_shared asks for: its block for one type), or frees it when the pool is full.
  void deallocate(void* block, std::size_t size, std::size_t align) noexcept {
    Block freed(block, Free{size, align});
    sync::LockGuard guard(lock_);
    if (size_ == 0) {
      size_ = size;
      align_ = align;
    }
    if (size == size_ && align == align_ && kept_.size() < kMaxKept) {
      ASAN_POISON_MEMORY_REGION(block, size);
      kept_.push_back(std::move(freed));
    }
  }

 private:
  struct Free {
    std::size_t size, align;
    void operator()(void* block) const {
      ASAN_UNPOISON_MEMORY_REGION(block, size);
      ::operator delete (block, std::align_val_t{align});
    }
  };
  using Block = std::unique_ptr<void, Free>;

  // A leaf lock: the last reference to a pooled object may go under any of the engine's locks.
  sync::SpinLock lock_;
  std::size_t size_ CUSED_GUARDED_BY(lock_) = 0;  // of the blocks kept: the first one freed
  std::size_t align_ CUSED_GUARDED_BY(lock_) = 0;
  boost::container::static_vector<Block, kMaxKept> kept_ CUSED_GUARDED_BY(lock_);
};

// The allocator std::allocate_shared takes: every block it asks for comes from `pool`, which
// each object's control block keeps alive until the block is back.
template <typename T>
class PoolAllocator {
 public:
  using value_type = T;
  explicit PoolAllocator(std::shared_ptr<BlockPool> pool) : pool_(std::move(pool)) {}
  template <typename U>
  PoolAllocator(const PoolAllocator<U>& other) : pool_(other.pool()) {}

  T* allocate(std::size_t n) { return static_cast<T*>(pool_->allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T* block, std::size_t n) noexcept {
    pool_->deallocate(block, n * sizeof(T), alignof(T));
  }
  const std::shared_ptr<BlockPool>& pool() const { return pool_; }
  template <typename U>
  bool operator==(const PoolAllocator<U>& other) const {
    return pool_ == other.pool();
  }

 private:
  std::shared_ptr<BlockPool> pool_;
};

template <typename T, typename... Args>
std::shared_ptr<T> make_pooled(const std::shared_ptr<BlockPool>& pool, Args&&... args) {
  return std::allocate_shared<T>(PoolAllocator<T>(pool), std::forward<Args>(args)...);
}

}  // namespace cused::core
