// SPDX-License-Identifier: GPL-2.0-only
// Per-page metadata of a proc's buffer space (the kernel's binder_lru_page / binder_shrinker_mdata,
// the Rust driver's PageInfo). A page is in one of three states (S9.5, S9.12):
//   free    not installed: a hole in the memfd, reads as zero, costs no memory;
//   active  installed and covered by at least one allocated buffer;
//   lru     installed, no allocated buffer covers it, linked on the global PageLru so that the
//           shrinker can punch it out of the memfd.
// While the shrinker reclaims a page it is "isolated": off the LRU, about to be punched.
#pragma once

#include <atomic>
#include <boost/intrusive/list_hook.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace cused::core::alloc {

class Page;

struct ReclaimPoint;
using ReclaimHook = std::function<void(const ReclaimPoint&)>;

// What one visit of the shrinker's walk did to a page (the kernel's enum lru_status).
enum class ReclaimStep : std::uint8_t {
  skipped,    // the owner was busy: the page stays on the LRU (LRU_SKIP); the LRU lock was kept
  reclaimed,  // punched; the LRU lock was dropped and taken again (LRU_REMOVED_RETRY)
};

// The allocator whose buffer space a page is. The LRU's reclaim walk (page_lru.h) reaches it only
// through this, as list_lru_walk reaches binder_alloc_free_page through its callback: the LRU sits
// below the allocators that put pages on it.
class PageOwner {
 public:
  // Called with the LRU's lock held (PageLru::lock()), and returns with it held. Try-locks what
  // the owner's design prescribes; when that fails, returns skipped without dropping the LRU lock.
  // Otherwise isolates the page, drops the LRU lock, punches the page out of the memfd (running
  // `hook` between isolation and punch), releases what it took, takes the LRU lock again and
  // returns reclaimed. The owner may be gone as soon as the walk drops the LRU lock after a
  // reclaimed step. (Annotated CUSED_REQUIRES(lru_.lock()) by each implementation, which knows
  // its LRU; the walk calls it holding that lock.)
  virtual ReclaimStep reclaim_page(Page& page, const ReclaimHook& hook) = 0;
  // Bytes one reclaimed page gives back.
  virtual std::size_t page_bytes() const = 0;

 protected:
  ~PageOwner() = default;
};

enum class PageState : std::uint8_t { free, active, lru };

class Page {
 public:
  Page() = default;
  Page(const Page&) = delete;
  Page& operator=(const Page&) = delete;

  void init(PageOwner* owner, std::uint32_t index) {
    owner_ = owner;
    index_ = index;
  }
  PageOwner& owner() const { return *owner_; }
  std::uint32_t index() const { return index_; }

  // Whether the page holds memory in the memfd. Written under the lock that serializes
  // installation with reclaim in the design (the metadata mutex, the install mutex, or nothing in
  // the racy spin design), read elsewhere, hence atomic.
  bool installed() const { return installed_.load(std::memory_order_acquire); }
  void set_installed(bool installed) { installed_.store(installed, std::memory_order_release); }

 private:
  friend class PageLru;
  template <typename MetadataLock>
  friend class PageSpace;

  // Guarded by PageLru::lock_ (clang cannot name another object's lock here; PageLru's
  // accessors carry the annotation).
  boost::intrusive::list_member_hook<> lru_hook_;
  bool isolated_ = false;
  // Guarded by the owner's metadata lock: how many allocated buffers overlap this page.
  std::uint16_t users_ = 0;
  std::atomic<bool> installed_{false};
  PageOwner* owner_ = nullptr;
  std::uint32_t index_ = 0;
};

}  // namespace cused::core::alloc
