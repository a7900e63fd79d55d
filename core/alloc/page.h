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

namespace cused::core::alloc {

class Page;

// The allocator whose buffer space a page is. The LRU's reclaim walk (page_lru.h) reaches it only
// through this, as list_lru_walk reaches binder_alloc_free_page through its callback: the LRU sits
// below the allocators that put pages on it.
class PageOwner {
 public:
  // Called with the LRU's lock held: try-locks what the owner's variant prescribes and isolates
  // the page. False: the owner is busy, the page stays (LRU_SKIP).
  virtual bool begin_reclaim(Page& page) = 0;
  // Called without the LRU's lock, after a true begin_reclaim: punches the page out of the
  // memfd and releases what begin_reclaim took. Returns the bytes given back. The owner may be
  // gone once this returns.
  virtual std::size_t finish_reclaim(Page& page) = 0;

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

 private:
  friend class PageLru;
  friend class Allocator;

  // Guarded by PageLru::lock_ (clang cannot name another object's lock here; PageLru's
  // accessors carry the annotation).
  boost::intrusive::list_member_hook<> lru_hook_;
  bool isolated_ = false;
  // Guarded by the owner's metadata lock: how many allocated buffers overlap this page.
  std::uint16_t users_ = 0;
  // Whether the page holds memory in the memfd. Written under the lock that serializes
  // installation with reclaim in the variant (the metadata mutex, the install mutex, or nothing
  // in the racy spin variant), read elsewhere, hence atomic.
  std::atomic<bool> installed_{false};
  PageOwner* owner_ = nullptr;
  std::uint32_t index_ = 0;
};

}  // namespace cused::core::alloc
