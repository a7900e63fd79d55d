// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/page_space.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/alloc/alloc_lock.h"
#include "core/trace_events.h"

namespace cused::core::alloc {

namespace {

template <typename... Args>
std::string format(const char* pattern, Args... args) {
  char line[256];
  int n = std::snprintf(line, sizeof line, pattern, args...);
  return std::string(line, static_cast<std::size_t>(std::clamp(n, 0, int{sizeof line} - 1)));
}

}  // namespace

std::string format_totals(const SpaceTotals& t) {
  return format("allocated: %zu (num: %zu largest: %zu), free: %zu (num: %zu largest: %zu)",
                t.allocated_bytes, t.allocated_buffers, t.largest_allocated, t.free_bytes,
                t.free_buffers, t.largest_free);
}

template <typename L>
PageSpace<L>::PageSpace(BufferFile& file, Variant variant, PageLru& lru, AllocatorOptions options,
                        std::uint8_t trace_id)
    : file_(file),
      lru_(lru),
      lock_(options.lock_policy, trace_id),
      variant_(variant),
      options_(std::move(options)),
      page_size_(file.page_size()),
      pages_(variant.pages) {
  if (options_.install_latency.count() > 0 && !options_.timer)
    throw std::invalid_argument("install_latency without a timer to sleep it");
}

template <typename L>
PageSpace<L>::~PageSpace() {
  release();
}

template <typename L>
void PageSpace<L>::emit(std::string_view line) const {
  if (options_.log) options_.log(line);
}

template <typename L>
int PageSpace<L>::map(std::size_t vma_length, std::uint64_t vm_start) {
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

template <typename L>
void PageSpace<L>::unmap() {
  mapped_.store(false, std::memory_order_release);
}

template <typename L>
std::size_t PageSpace<L>::size() const {
  sync::LockGuard guard(lock_);
  return buffer_size_;
}

template <typename L>
int PageSpace<L>::admit(std::size_t data_size, std::size_t offsets_size,
                        std::size_t extra_buffers_size, bool is_async, pid_t sender_pid,
                        Request& request) const {
  if (!is_mapped()) {
    emit(format("%d: binder_alloc_buf, no vma", options_.pid));
    return -ESRCH;
  }
  std::size_t size = sanitized_size(data_size, offsets_size, extra_buffers_size);
  if (size == 0) return -EINVAL;  // S4.10, S11.14
  request = {size, data_size, offsets_size, extra_buffers_size, is_async, sender_pid};
  return 0;
}

template <typename L>
typename PageSpace<L>::Reservation PageSpace<L>::reserve_locked(
    const Request& request, std::unique_ptr<BufferNode>& spare) {
  Reservation reservation;
  if (!is_mapped()) {  // unmapped since the check in admit
    reservation.error = -ESRCH;
    return reservation;
  }
  const std::size_t size = request.size;
  if (request.is_async && free_async_space_ < size) {  // S9.6
    reservation.error = -ENOSPC;
    return reservation;
  }
  BufferNode* best = space_.best_fit(size);
  if (!best) {  // S9.8
    reservation.log.push_back(
        format("%d: binder_alloc_buf size %zu failed, no address space", options_.pid, size));
    reservation.log.push_back(format_totals(space_.totals()));
    reservation.error = -ENOSPC;
    return reservation;
  }
  if (!spare && space_.needs_node(*best, size)) {
    reservation.needs_node = true;
    return reservation;
  }
  // Page metadata first (a lazy table may allocate, and nothing has changed yet if it throws).
  const std::size_t first = best->offset() / page_size_;
  const std::size_t last = (best->offset() + size - 1) / page_size_;
  for (std::size_t index = first; index <= last; ++index)
    reservation.pages.push_back(&pages_.get(index));
  reservation.first_page = first;
  reservation.node = space_.take(*best, size, spare);
  return reservation;
}

template <typename L>
bool PageSpace<L>::take_pages_locked(const Reservation& reservation, OnIsolated on_isolated) {
  const PageRun& run = reservation.pages;
  const std::size_t first = reservation.first_page;
  // binder_lru_freelist_del: the range, then each page taken back from the LRU.
  trace::emit(TraceEventType::kUpdatePageRange, options_.pid, true, first * page_size_,
              run.size() * page_size_);
  sync::LockGuard lru(lru_.lock());
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
    } else if (on_isolated == OnIsolated::refuse && lru_.isolated(page)) {
      put_pages_locked_lru(first, first + i);
      return false;
    }
    // Otherwise the page is free and gets installed (OnIsolated::take: an isolated page too).
    page.users_ = 1;
  }
  return true;
}

template <typename L>
void PageSpace<L>::undo_locked(Reservation& reservation) {
  space_.release(*reservation.node);  // the split's node, if any, is kept again by the merge
  reservation.node = nullptr;
  reservation.pages.clear();
}

template <typename L>
void PageSpace<L>::commit_locked(Reservation& reservation, const Request& request) {
  BufferNode& node = *reservation.node;
  node.data_size_ = request.data_size;
  node.offsets_size_ = request.offsets_size;
  node.extra_buffers_size_ = request.extra_buffers_size;
  node.pid_ = request.sender_pid;
  node.async_transaction_ = request.is_async;
  node.oneway_spam_suspect_ = false;
  node.debug_id_ = 0;
  node.clear_on_free_ = false;
  node.allow_user_free_.store(false, std::memory_order_relaxed);
  if (request.is_async) {
    free_async_space_ -= request.size;
    std::string warning;
    node.oneway_spam_suspect_ = low_async_space_locked(request.sender_pid, warning);
    if (!warning.empty()) reservation.log.push_back(std::move(warning));
  }
}

template <typename L>
NewBufferResult PageSpace<L>::answer(const Reservation& reservation) const {
  for (const std::string& line : reservation.log) emit(line);
  if (!reservation.node) return {nullptr, reservation.error};
  return {reservation.node, 0};
}

template <typename L>
NewBufferResult PageSpace<L>::answer_installed(Reservation& reservation, int install_error) {
  if (reservation.node && install_error != 0) {
    sync::LockGuard guard(lock_);
    free_locked(*reservation.node);
    reservation.node = nullptr;
    reservation.error = install_error;
  }
  return answer(reservation);
}

template <typename L>
void PageSpace<L>::put_pages(std::size_t first, std::size_t last) {
  // binder_lru_freelist_add: the range, then each page that goes onto the LRU.
  trace::emit(TraceEventType::kUpdatePageRange, options_.pid, false, first * page_size_,
              (last - first) * page_size_);
  sync::LockGuard lru(lru_.lock());
  put_pages_locked_lru(first, last);
}

template <typename L>
void PageSpace<L>::put_pages_locked_lru(std::size_t first, std::size_t end) {
  for (std::size_t index = first; index < end; ++index) {
    Page& page = *pages_.find(index);
    // The last buffer on this page is gone: an installed page waits on the LRU (S9.5).
    if (--page.users_ == 0 && page.installed() && !lru_.on_lru(page)) {
      trace::emit(TraceEventType::kFreeLruStart, options_.pid, page.index());
      lru_.add(page);
      trace::emit(TraceEventType::kFreeLruEnd, options_.pid, page.index());
    }
  }
}

template <typename L>
bool PageSpace<L>::all_installed(const PageRun& run) {
  return std::all_of(run.begin(), run.end(), [](const Page* page) { return page->installed(); });
}

template <typename L>
int PageSpace<L>::install_pages(const PageRun& run) {
  for (std::size_t i = 0; i < run.size();) {
    if (run[i]->installed()) {
      ++i;
      continue;
    }
    std::size_t j = i + 1;  // a run of consecutive missing pages: one system call
    while (j < run.size() && !run[j]->installed()) ++j;
    if (!is_mapped()) return -ESRCH;  // S9.5: the mapping went away
    std::size_t first = run[i]->index();
    // The only way this fails is the memfd not getting memory (memcg limit): ENOMEM, which the
    // engine answers with BR_FAILED_REPLY (S9.5). Populating a page another installer already
    // populated leaves it alone (BufferFile::populate), so concurrent installers are safe.
    // One system call installs the whole run, so its pages' starts come before their ends.
    trace_pages(TraceEventType::kAllocPageStart, first, j - i);
    const auto since = trace::start();
    if (file_.populate(first * page_size_, (j - i) * page_size_) != 0) return -ENOMEM;
    if (options_.install_latency.count() > 0)
      options_.timer->sleep(options_.install_latency * static_cast<long>(j - i));
    trace_pages(TraceEventType::kAllocPageEnd, first, j - i);
    trace::emit_since(since, TraceEventType::kPageInstall, options_.pid, first, j - i);
    for (std::size_t k = i; k < j; ++k) run[k]->set_installed(true);
    std::size_t high = run[j - 1]->index() + 1;
    std::size_t seen = pages_high_.load(std::memory_order_relaxed);
    while (seen < high && !pages_high_.compare_exchange_weak(seen, high)) {
    }
    i = j;
  }
  return 0;
}

template <typename L>
void PageSpace<L>::trace_pages(TraceEventType type, std::size_t first, std::size_t count) const {
  if (!trace::enabled()) return;
  for (std::size_t index = first; index < first + count; ++index)
    trace::emit(type, options_.pid, index);
}

template <typename L>
bool PageSpace<L>::low_async_space_locked(pid_t sender_pid, std::string& warning) {
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

template <typename L>
FreeLookup PageSpace<L>::prepare_to_free(std::uint64_t user_address) {
  std::uint64_t start = vm_start();
  if (user_address < start) return {nullptr, -ENOENT};
  return prepare_to_free_offset(static_cast<std::size_t>(user_address - start));
}

template <typename L>
FreeLookup PageSpace<L>::prepare_to_free_offset(std::size_t offset) {
  sync::LockGuard guard(lock_);
  return prepare_to_free_locked(offset);
}

template <typename L>
FreeLookup PageSpace<L>::prepare_to_free_locked(std::size_t offset) {
  BufferNode* node = space_.find_allocated(offset);
  if (!node) return {nullptr, -ENOENT};
  // S11.1: never handed out yet, or a free already in progress.
  if (!node->take_allow_user_free()) return {nullptr, -EPERM};
  return {node, 0};
}

template <typename L>
void PageSpace<L>::clear_buffer(const Buffer& buffer) const {
  std::memset(file_.data() + buffer.offset(), 0, buffer.size());
}

template <typename L>
void PageSpace<L>::free_buffer(Buffer& buffer) {
  auto& node = static_cast<BufferNode&>(buffer);
  // S9.10. Outside the lock, as in the kernel: the buffer is ours until free_locked.
  if (node.clear_on_free()) {
    clear_buffer(node);
    node.set_clear_on_free(false);
  }
  sync::LockGuard guard(lock_);
  free_locked(node);
}

template <typename L>
void PageSpace<L>::free_locked(BufferNode& node) {
  if (node.async_transaction()) free_async_space_ += node.size();  // S9.6, S11.11
  put_pages(first_page(node), last_page(node) + 1);
  space_.release(node);
}

template <typename L>
int PageSpace<L>::copy_to_buffer(const Buffer& buffer, std::size_t buffer_offset, const void* src,
                                 std::size_t bytes) const {
  if (bytes > buffer.size() || buffer_offset > buffer.size() - bytes || buffer_offset % 4 != 0)
    return -EINVAL;
  std::memcpy(file_.data() + buffer.offset() + buffer_offset, src, bytes);
  return 0;
}

template <typename L>
int PageSpace<L>::copy_from_buffer(const Buffer& buffer, std::size_t buffer_offset, void* dst,
                                   std::size_t bytes) const {
  if (bytes > buffer.size() || buffer_offset > buffer.size() - bytes || buffer_offset % 4 != 0)
    return -EINVAL;
  std::memcpy(dst, file_.data() + buffer.offset() + buffer_offset, bytes);
  return 0;
}

template <typename L>
PageState PageSpace<L>::page_state_locked(const Page* page) const {
  if (!page) return PageState::free;
  if (lru_.on_lru(*page)) return PageState::lru;
  // An isolated page is on its way out: count it free, as the kernel does once it cleared
  // the page pointer.
  if (page->installed() && !lru_.isolated(*page)) return PageState::active;
  return PageState::free;
}

template <typename L>
PageState PageSpace<L>::page_state(std::size_t index) const {
  sync::LockGuard guard(lock_);
  sync::LockGuard lru(lru_.lock());
  return page_state_locked(pages_.find(index));
}

template <typename L>
void PageSpace<L>::page_states(std::span<PageState> out) const {
  sync::LockGuard guard(lock_);
  sync::LockGuard lru(lru_.lock());
  for (std::size_t index = 0; index < out.size(); ++index)
    out[index] = page_state_locked(pages_.find(index));
}

template <typename L>
AllocatorStats PageSpace<L>::stats() const {
  AllocatorStats stats;
  sync::LockGuard guard(lock_);
  static_cast<SpaceTotals&>(stats) = space_.totals();
  stats.size = buffer_size_;
  stats.free_async_space = free_async_space_;
  stats.pages_high = pages_high_.load(std::memory_order_relaxed);
  stats.page_metadata_bytes = pages_.metadata_bytes();
  add_design_stats_locked(stats);
  sync::LockGuard lru(lru_.lock());
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

template <typename L>
std::size_t PageSpace<L>::allocated_count() const {
  sync::LockGuard guard(lock_);
  return space_.totals().allocated_buffers;
}

template <typename L>
void PageSpace<L>::for_each_allocated(const std::function<void(const Buffer&)>& visit) const {
  sync::LockGuard guard(lock_);
  space_.for_each_allocated([&](const BufferNode& node) { visit(node); });
}

template <typename L>
void PageSpace<L>::release() {
  unmap();
  {
    sync::LockGuard guard(lock_);
    if (released_) return;
    released_ = true;
    while (BufferNode* node = space_.first_allocated()) {
      if (node->clear_on_free()) clear_buffer(*node);  // S1.9 step 8, S9.10
      node->set_clear_on_free(false);
      free_locked(*node);
    }
    sync::LockGuard lru(lru_.lock());
    detached_ = true;
    for (std::size_t index = 0; index < pages_.page_count(); ++index) {
      Page* page = pages_.find(index);
      if (page && lru_.on_lru(*page)) lru_.remove(*page);
    }
  }
  wait_for_reclaims();
  sync::LockGuard guard(lock_);
  if (buffer_size_ > 0) file_.punch_hole(0, buffer_size_);
  pages_.for_each_existing([](Page& page) { page.set_installed(false); });
}

template <typename L>
void PageSpace<L>::wait_for_reclaims() {
  for (;;) {
    std::uint32_t epoch = lru_.reclaim_epoch();
    {
      sync::LockGuard lru(lru_.lock());
      if (reclaims_in_flight_ == 0) return;
    }
    lru_.wait_for_reclaim_done(epoch);
  }
}

template <typename L>
void PageSpace<L>::isolate_locked(Page& page) {
  lru_.isolate(page);
  ++reclaims_in_flight_;
}

template <typename L>
void PageSpace<L>::punch(Page& page, const ReclaimHook& hook) {
  if (hook) hook(ReclaimPoint{*this, page.index()});
  trace::emit(TraceEventType::kUnmapUserStart, options_.pid, page.index());
  const auto since = trace::start();
  file_.punch_hole(page.index() * page_size_, page_size_);
  trace::emit(TraceEventType::kUnmapUserEnd, options_.pid, page.index());
  trace::emit_since(since, TraceEventType::kPageReclaim, options_.pid, page.index());
}

template <typename L>
ReclaimStep PageSpace<L>::end_reclaim_locked() {
  // The wake-up goes through the LRU, which outlives every allocator.
  PageLru& lru = lru_;
  --reclaims_in_flight_;
  lru.reclaim_done();
  return ReclaimStep::reclaimed;
}

// The metadata locks cused's designs use (alloc_lock.h).
template class PageSpace<SleepingAllocLock>;
template class PageSpace<AllocSpinLock>;

}  // namespace cused::core::alloc
