#include "core/alloc/allocator.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

namespace cused::core::alloc {

namespace {

constexpr std::size_t kAlign = sizeof(std::uint64_t);  // binder_size_t: protocol 8 (S1.13)

bool align_up(std::size_t value, std::size_t& out) {
  if (value > std::numeric_limits<std::size_t>::max() - (kAlign - 1)) return false;
  out = (value + kAlign - 1) & ~(kAlign - 1);
  return true;
}

template <typename... Args>
std::string format(const char* pattern, Args... args) {
  char line[256];
  int n = std::snprintf(line, sizeof line, pattern, args...);
  return std::string(line, static_cast<std::size_t>(std::clamp(n, 0, int{sizeof line} - 1)));
}

}  // namespace

std::size_t sanitized_size(std::size_t data_size, std::size_t offsets_size,
                           std::size_t extra_buffers_size) {
  std::size_t data, offsets, extra;
  if (!align_up(data_size, data) || !align_up(offsets_size, offsets) ||
      !align_up(extra_buffers_size, extra))
    return 0;
  std::size_t total;
  if (__builtin_add_overflow(data, offsets, &total) || __builtin_add_overflow(total, extra, &total))
    return 0;
  return std::max(total, kAlign);  // empty transactions still get a unique address
}

std::string format_totals(const SpaceTotals& t) {
  return format("allocated: %zu (num: %zu largest: %zu), free: %zu (num: %zu largest: %zu)",
                t.allocated_bytes, t.allocated_buffers, t.largest_allocated, t.free_bytes,
                t.free_buffers, t.largest_free);
}

// What one pass under the metadata lock produced.
struct Allocator::Attempt {
  BufferNode* node = nullptr;
  int error = 0;
  bool retry = false;       // spin_install: met a page the shrinker is reclaiming
  bool needs_node = false;  // the split needs a node and none is left: allocate one, try again
  PageRun pages;            // every page the buffer covers
  boost::container::small_vector<std::string, 2> log;
};

Allocator::Allocator(BufferFile& file, Variant variant, PageLru& lru, AllocatorOptions options)
    : file_(file),
      variant_(variant),
      lru_(lru),
      options_(std::move(options)),
      page_size_(file.page_size()),
      lock_(variant.lock, options_.lock_policy),
      install_lock_(options_.lock_policy, static_cast<std::uint8_t>(variant.lock)),
      pages_(variant.pages) {
  if (options_.install_latency.count() > 0 && !options_.timer)
    throw std::invalid_argument("install_latency without a timer to sleep it");
}

Allocator::~Allocator() { release(); }

void Allocator::emit(std::string_view line) const {
  if (options_.log) options_.log(line);
}

int Allocator::map(std::size_t vma_length, std::uint64_t vm_start) {
  sync::LockGuard guard(lock_);
  if (ever_mapped_) return -EBUSY;
  std::size_t size = std::min({vma_length, kMaxBufferSpace, file_.size()});
  size -= size % page_size_;
  if (size == 0) return -EINVAL;  // a failed mmap does not use up the "once" (S1.4)
  ever_mapped_ = true;
  buffer_size_ = size;
  vm_start_.store(vm_start, std::memory_order_relaxed);
  pages_.reset(this, size / page_size_);
  space_.reset(size);
  free_async_space_ = size / 2;  // S9.6
  mapped_.store(true, std::memory_order_release);
  return 0;
}

void Allocator::unmap() { mapped_.store(false, std::memory_order_release); }

std::size_t Allocator::size() const {
  sync::LockGuard guard(lock_);
  return buffer_size_;
}

NewBufferResult Allocator::new_buffer(std::size_t data_size, std::size_t offsets_size,
                                      std::size_t extra_buffers_size, bool is_async,
                                      pid_t sender_pid) {
  if (!is_mapped()) {
    emit(format("%d: binder_alloc_buf, no vma", options_.pid));
    return {nullptr, -ESRCH};
  }
  std::size_t size = sanitized_size(data_size, offsets_size, extra_buffers_size);
  if (size == 0) return {nullptr, -EINVAL};  // S4.10, S11.14
  const Request request{size, data_size, offsets_size, extra_buffers_size, is_async, sender_pid};
  Attempt attempt;
  try {
    // The node a split needs is one a merge left (the kernel's slab cache); only when none is
    // left is one allocated, outside the lock like the kernel's, and the attempt made again.
    std::unique_ptr<BufferNode> spare;
    for (;;) {
      attempt = try_new_buffer(request, spare);
      if (attempt.needs_node) {
        spare = std::make_unique<BufferNode>();
        continue;
      }
      if (!attempt.retry) break;
      // spin_install: the shrinker holds the install lock from isolating a page until it is
      // punched; once we get it, that page is free and can be installed afresh.
      install_lock_.lock();
      install_lock_.unlock();
    }
  } catch (const std::bad_alloc&) {
    // Only the node or lazy page metadata can fail, before anything changed (S9.5: ENOMEM).
    return {nullptr, -ENOMEM};
  }
  for (const std::string& line : attempt.log) emit(line);
  if (!attempt.node) return {nullptr, attempt.error};

  int error = 0;
  if (variant_.lock == LockVariant::spin) {
    // The racy design: nothing orders this with a reclaim of the same page.
    error = install_pages(attempt.pages);
  } else if (variant_.lock == LockVariant::spin_install && !all_installed(attempt.pages)) {
    // Pages that are installed now stay installed: take_pages() saw none of them isolated and
    // they are ours now, so the shrinker cannot pick them. Only a missing page needs the lock.
    sync::LockGuard install(install_lock_);
    error = install_pages(attempt.pages);
  }  // mutex: installed under lock_ in try_new_buffer
  if (error != 0) {
    sync::LockGuard guard(lock_);
    free_locked(*attempt.node);
    return {nullptr, error};
  }
  return {attempt.node, 0};
}

Allocator::Attempt Allocator::try_new_buffer(const Request& request,
                                             std::unique_ptr<BufferNode>& spare) {
  sync::LockGuard guard(lock_);
  Attempt attempt = new_buffer_locked(request, spare);
  if (attempt.node && variant_.lock == LockVariant::mutex) {
    // The baseline: one sleeping lock across metadata and installation.
    attempt.error = install_pages(attempt.pages);
    if (attempt.error != 0) {
      free_locked(*attempt.node);
      attempt.node = nullptr;
    }
  }
  return attempt;
}

Allocator::Attempt Allocator::new_buffer_locked(const Request& request,
                                                std::unique_ptr<BufferNode>& spare) {
  Attempt attempt;
  if (!is_mapped()) {  // unmapped since the check in new_buffer
    attempt.error = -ESRCH;
    return attempt;
  }
  const std::size_t size = request.size;
  if (request.is_async && free_async_space_ < size) {  // S9.6
    attempt.error = -ENOSPC;
    return attempt;
  }
  BufferNode* best = space_.best_fit(size);
  if (!best) {  // S9.8
    attempt.log.push_back(
        format("%d: binder_alloc_buf size %zu failed, no address space", options_.pid, size));
    attempt.log.push_back(format_totals(space_.totals()));
    attempt.error = -ENOSPC;
    return attempt;
  }
  if (!spare && space_.needs_node(*best, size)) {
    attempt.needs_node = true;
    return attempt;
  }
  // Page metadata first (a lazy table may allocate, and nothing has changed yet if it throws).
  const std::size_t first = best->offset() / page_size_;
  const std::size_t last = (best->offset() + size - 1) / page_size_;
  for (std::size_t index = first; index <= last; ++index)
    attempt.pages.push_back(&pages_.get(index));
  BufferNode& node = *space_.take(*best, size, spare);
  if (!take_pages(first, attempt.pages)) {
    // spin_install met a page the shrinker isolated: undo the split and everything else, then
    // the caller waits for the shrinker and starts over.
    space_.release(node);
    ++reclaim_conflicts_;  // the split's node, if any, is kept again by the merge
    attempt.pages.clear();
    attempt.retry = true;
    return attempt;
  }
  node.data_size_ = request.data_size;
  node.offsets_size_ = request.offsets_size;
  node.extra_buffers_size_ = request.extra_buffers_size;
  node.pid_ = request.sender_pid;
  node.async_transaction_ = request.is_async;
  node.oneway_spam_suspect_ = false;
  node.transaction = nullptr;
  node.target_node = nullptr;
  node.debug_id = 0;
  node.clear_on_free = false;
  node.allow_user_free.store(false, std::memory_order_relaxed);
  if (request.is_async) {
    free_async_space_ -= size;
    std::string warning;
    node.oneway_spam_suspect_ = low_async_space_locked(request.sender_pid, warning);
    if (!warning.empty()) attempt.log.push_back(std::move(warning));
  }
  attempt.node = &node;
  return attempt;
}

bool Allocator::take_pages(std::size_t first, const PageRun& run) {
  // binder_lru_freelist_del: the range, then each page taken back from the LRU.
  trace::emit(TraceEventType::kUpdatePageRange, options_.pid, true, first * page_size_,
              run.size() * page_size_);
  sync::LockGuard lru(lru_.lock_);
  for (std::size_t i = 0; i < run.size(); ++i) {
    Page& page = *run[i];
    if (page.users_ > 0) {  // shared with an allocated neighbour: already active
      ++page.users_;
      continue;
    }
    if (lru_.on_lru(page)) {
      trace::emit(TraceEventType::kAllocLruStart, options_.pid, page.index());
      lru_.remove(page);
      trace::emit(TraceEventType::kAllocLruEnd, options_.pid, page.index());
    } else if (variant_.lock == LockVariant::spin_install && lru_.isolated(page)) {
      put_pages_locked_lru(first, first + i);
      return false;
    }
    // Otherwise the page is free and gets installed. (Under `spin` an isolated page lands here
    // too: the shrinker already marked it not installed but has not punched it yet.)
    page.users_ = 1;
  }
  return true;
}

void Allocator::put_pages(std::size_t first, std::size_t last) {
  // binder_lru_freelist_add: the range, then each page that goes onto the LRU.
  trace::emit(TraceEventType::kUpdatePageRange, options_.pid, false, first * page_size_,
              (last - first) * page_size_);
  sync::LockGuard lru(lru_.lock_);
  put_pages_locked_lru(first, last);
}

void Allocator::put_pages_locked_lru(std::size_t first, std::size_t end) {
  for (std::size_t index = first; index < end; ++index) {
    Page& page = *pages_.find(index);
    // The last buffer on this page is gone: an installed page waits on the LRU (S9.5).
    if (--page.users_ == 0 && page.installed_.load(std::memory_order_acquire) &&
        !lru_.on_lru(page)) {
      trace::emit(TraceEventType::kFreeLruStart, options_.pid, page.index());
      lru_.add(page);
      trace::emit(TraceEventType::kFreeLruEnd, options_.pid, page.index());
    }
  }
}

bool Allocator::all_installed(const PageRun& run) {
  return std::all_of(run.begin(), run.end(), [](const Page* page) {
    return page->installed_.load(std::memory_order_acquire);
  });
}

int Allocator::install_pages(const PageRun& run) {
  for (std::size_t i = 0; i < run.size();) {
    if (run[i]->installed_.load(std::memory_order_acquire)) {
      ++i;
      continue;
    }
    std::size_t j = i + 1;  // a run of consecutive missing pages: one system call
    while (j < run.size() && !run[j]->installed_.load(std::memory_order_acquire)) ++j;
    if (!is_mapped()) return -ESRCH;  // S9.5: the mapping went away
    std::size_t first = run[i]->index();
    // The only way this fails is the memfd not getting memory (memcg limit): ENOMEM, which the
    // engine answers with BR_FAILED_REPLY (S9.5).
    // One system call installs the whole run, so its pages' starts come before their ends.
    trace_pages(TraceEventType::kAllocPageStart, first, j - i);
    const auto since = trace::start();
    if (file_.populate(first * page_size_, (j - i) * page_size_) != 0) return -ENOMEM;
    if (options_.install_latency.count() > 0)
      options_.timer->sleep(options_.install_latency * static_cast<long>(j - i));
    trace_pages(TraceEventType::kAllocPageEnd, first, j - i);
    trace::emit_since(since, TraceEventType::kPageInstall, options_.pid, first, j - i);
    for (std::size_t k = i; k < j; ++k) run[k]->installed_.store(true, std::memory_order_release);
    std::size_t high = run[j - 1]->index() + 1;
    std::size_t seen = pages_high_.load(std::memory_order_relaxed);
    while (seen < high && !pages_high_.compare_exchange_weak(seen, high)) {
    }
    i = j;
  }
  return 0;
}

void Allocator::trace_pages(TraceEventType type, std::size_t first, std::size_t count) const {
  if (!trace::enabled()) return;
  for (std::size_t index = first; index < first + count; ++index)
    trace::emit(type, options_.pid, index);
}

bool Allocator::low_async_space_locked(pid_t sender_pid, std::string& warning) {
  // S9.7: only watch for spammers once less than 20% of the async budget (10% of the space)
  // is left, and blame the sender whose allocation crossed the line.
  if (free_async_space_ >= buffer_size_ / 10) {
    oneway_spam_detected_ = false;
    return false;
  }
  std::size_t buffers = 0, bytes = 0;
  space_.for_each_allocated([&](const BufferNode& node) {
    if (node.pid() != sender_pid || !node.async_transaction()) return;
    ++buffers;
    bytes += node.size();
  });
  if (buffers <= 50 && bytes <= buffer_size_ / 4) return false;
  warning = format("%d: pid %d spamming oneway? %zu buffers allocated for a total size of %zu",
                   options_.pid, sender_pid, buffers, bytes);
  if (oneway_spam_detected_) return false;
  oneway_spam_detected_ = true;
  return true;
}

FreeLookup Allocator::prepare_to_free(std::uint64_t user_address) {
  std::uint64_t start = vm_start();
  if (user_address < start) return {nullptr, -ENOENT};
  return prepare_to_free_offset(static_cast<std::size_t>(user_address - start));
}

FreeLookup Allocator::prepare_to_free_offset(std::size_t offset) {
  sync::LockGuard guard(lock_);
  return prepare_to_free_locked(offset);
}

FreeLookup Allocator::prepare_to_free_locked(std::size_t offset) {
  BufferNode* node = space_.find_allocated(offset);
  if (!node) return {nullptr, -ENOENT};
  // S11.1: never handed out yet, or a free already in progress.
  if (!node->allow_user_free.exchange(false, std::memory_order_acq_rel)) return {nullptr, -EPERM};
  return {node, 0};
}

void Allocator::clear_buffer(const Buffer& buffer) const {
  std::memset(file_.data() + buffer.offset(), 0, buffer.size());
}

void Allocator::free_buffer(Buffer& buffer) {
  auto& node = static_cast<BufferNode&>(buffer);
  // S9.10. Outside the lock, as in the kernel: the buffer is ours until free_locked.
  if (node.clear_on_free) {
    clear_buffer(node);
    node.clear_on_free = false;
  }
  sync::LockGuard guard(lock_);
  free_locked(node);
}

void Allocator::free_locked(BufferNode& node) {
  if (node.async_transaction()) free_async_space_ += node.size();  // S9.6, S11.11
  put_pages(first_page(node), last_page(node) + 1);
  space_.release(node);
}

int Allocator::copy_to_buffer(const Buffer& buffer, std::size_t buffer_offset, const void* src,
                              std::size_t bytes) const {
  if (bytes > buffer.size() || buffer_offset > buffer.size() - bytes || buffer_offset % 4 != 0)
    return -EINVAL;
  std::memcpy(file_.data() + buffer.offset() + buffer_offset, src, bytes);
  return 0;
}

int Allocator::copy_from_buffer(const Buffer& buffer, std::size_t buffer_offset, void* dst,
                                std::size_t bytes) const {
  if (bytes > buffer.size() || buffer_offset > buffer.size() - bytes || buffer_offset % 4 != 0)
    return -EINVAL;
  std::memcpy(dst, file_.data() + buffer.offset() + buffer_offset, bytes);
  return 0;
}

PageState Allocator::page_state_locked(const Page* page) const {
  if (!page) return PageState::free;
  if (lru_.on_lru(*page)) return PageState::lru;
  // An isolated page is on its way out: count it free, as the kernel does once it cleared
  // the page pointer.
  if (page->installed_.load(std::memory_order_acquire) && !lru_.isolated(*page))
    return PageState::active;
  return PageState::free;
}

PageState Allocator::page_state(std::size_t index) const {
  sync::LockGuard guard(lock_);
  sync::LockGuard lru(lru_.lock_);
  return page_state_locked(pages_.find(index));
}

void Allocator::page_states(std::span<PageState> out) const {
  sync::LockGuard guard(lock_);
  sync::LockGuard lru(lru_.lock_);
  for (std::size_t index = 0; index < out.size(); ++index)
    out[index] = page_state_locked(pages_.find(index));
}

AllocatorStats Allocator::stats() const {
  AllocatorStats stats;
  sync::LockGuard guard(lock_);
  static_cast<SpaceTotals&>(stats) = space_.totals();
  stats.size = buffer_size_;
  stats.free_async_space = free_async_space_;
  stats.pages_high = pages_high_.load(std::memory_order_relaxed);
  stats.page_metadata_bytes = pages_.metadata_bytes();
  stats.reclaim_conflicts = reclaim_conflicts_;
  sync::LockGuard lru(lru_.lock_);
  for (std::size_t index = 0; index < pages_.page_count(); ++index) {
    switch (page_state_locked(pages_.find(index))) {
      case PageState::active:
        ++stats.pages.active;
        break;
      case PageState::lru:
        ++stats.pages.lru;
        break;
      case PageState::free:
        ++stats.pages.free;
        break;
    }
  }
  return stats;
}

std::size_t Allocator::allocated_count() const {
  sync::LockGuard guard(lock_);
  return space_.totals().allocated_buffers;
}

void Allocator::for_each_allocated(const std::function<void(const Buffer&)>& visit) const {
  sync::LockGuard guard(lock_);
  space_.for_each_allocated([&](const BufferNode& node) { visit(node); });
}

void Allocator::release() {
  unmap();
  {
    sync::LockGuard guard(lock_);
    if (released_) return;
    released_ = true;
    while (BufferNode* node = space_.first_allocated()) {
      if (node->clear_on_free) clear_buffer(*node);  // S1.9 step 8, S9.10
      node->clear_on_free = false;
      free_locked(*node);
    }
    sync::LockGuard lru(lru_.lock_);
    detached_ = true;
    for (std::size_t index = 0; index < pages_.page_count(); ++index) {
      Page* page = pages_.find(index);
      if (page && lru_.on_lru(*page)) lru_.remove(*page);
    }
  }
  wait_for_reclaims();
  sync::LockGuard guard(lock_);
  if (buffer_size_ > 0) file_.punch_hole(0, buffer_size_);
  pages_.for_each_existing(
      [](Page& page) { page.installed_.store(false, std::memory_order_relaxed); });
}

void Allocator::wait_for_reclaims() {
  for (;;) {
    std::uint32_t epoch = lru_.reclaim_epoch();
    {
      sync::LockGuard lru(lru_.lock_);
      if (reclaims_in_flight_ == 0) return;
    }
    lru_.wait_for_reclaim_done(epoch);
  }
}

// The shrinker's callback, per variant (binder_alloc_free_page and its spin-era forms).
bool Allocator::begin_reclaim(Page& page) CUSED_NO_THREAD_SAFETY_ANALYSIS {
  if (detached_) return false;
  switch (variant_.lock) {
    case LockVariant::mutex:
      // Held until the page is punched, so no allocation can see the page half reclaimed.
      if (!lock_.try_lock()) return false;
      break;
    case LockVariant::spin:
      // The metadata is updated under the spinlock, but the punch comes later, unlocked: an
      // allocation in between sees a free page, reuses it, and loses what it writes.
      if (!lock_.try_lock()) return false;
      page.installed_.store(false, std::memory_order_release);
      lock_.unlock();
      break;
    case LockVariant::spin_install:
      // Held across clear-and-punch; allocations that meet the isolated page wait on it.
      if (!install_lock_.try_lock()) return false;
      break;
  }
  lru_.isolate(page);
  ++reclaims_in_flight_;
  return true;
}

std::size_t Allocator::finish_reclaim(Page& page) CUSED_NO_THREAD_SAFETY_ANALYSIS {
  const std::size_t bytes = page_size_;
  if (variant_.lock != LockVariant::spin) page.installed_.store(false, std::memory_order_release);
  // binder_alloc_free_page's zap: the hole takes the page out of the client's mapping.
  trace::emit(TraceEventType::kUnmapUserStart, options_.pid, page.index());
  const auto since = trace::start();
  file_.punch_hole(page.index() * page_size_, page_size_);
  trace::emit(TraceEventType::kUnmapUserEnd, options_.pid, page.index());
  trace::emit_since(since, TraceEventType::kPageReclaim, options_.pid, page.index());
  {
    sync::LockGuard lru(lru_.lock_);
    lru_.end_isolation(page);
  }
  if (variant_.lock == LockVariant::mutex) lock_.unlock();
  if (variant_.lock == LockVariant::spin_install) install_lock_.unlock();
  // The last touch of this allocator: release() may destroy it as soon as this reaches zero,
  // so the wake-up goes through the LRU, which outlives every allocator.
  PageLru& lru = lru_;
  {
    sync::LockGuard guard(lru.lock_);
    --reclaims_in_flight_;
  }
  lru.reclaim_done();
  return bytes;
}

}  // namespace cused::core::alloc
