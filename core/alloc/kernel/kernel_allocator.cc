// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/kernel/kernel_allocator.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <new>
#include <utility>

#include "core/alloc/kernel/selected_lru.h"
#include "core/sync/lock_guard.h"
#include "core/trace_events.h"

namespace cused::core::alloc {

// A kernel buffer behind the engine's handle: the fields the engine reads are copied from the
// kernel's binder_buffer when it is allocated (they do not change while it is).
class KernelAllocator::KernelBuffer : public Buffer {
 public:
  cused_kbuf* kbuf = nullptr;
};

namespace {

// The lines the file logged during the current entry point, emitted after it returns (the
// engine's log sink must not be called with allocator locks held).
thread_local std::vector<std::string> pending_log;

// The reclaim this thread is running: the hook to run before the page is punched.
struct ReclaimContext {
  const KernelAllocator* allocator = nullptr;
  std::size_t index = 0;
  const ReclaimHook* hook = nullptr;
};
thread_local ReclaimContext reclaiming;

// An address for the kernel's vma when the client's is 0 (tests map at 0).
constexpr std::uint64_t kStandInBase = std::uint64_t{1} << 32;

}  // namespace

// Emits the logged lines when an entry point returns.
class KernelAllocator::LogScope {
 public:
  explicit LogScope(const KernelAllocator& allocator) : allocator_(allocator) {}
  ~LogScope() {
    if (pending_log.empty()) return;
    std::vector<std::string> lines;
    lines.swap(pending_log);
    if (allocator_.options_.log)
      for (const std::string& line : lines) allocator_.options_.log(line);
  }
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  const KernelAllocator& allocator_;
};

KernelAllocator::KernelAllocator(const KernelObject& object, BufferFile& file, Variant variant,
                                 PageLru& lru, AllocatorOptions options, std::uint8_t trace_id)
    : object_(object),
      abi_(*object.abi),
      file_(file),
      lru_(lru),
      variant_(variant),
      options_(std::move(options)),
      trace_id_(trace_id),
      page_size_(file.page_size()),
      pages_(file.size() / file.page_size()) {
  for (std::size_t i = 0; i < pages_.size(); ++i)
    pages_[i].init(this, static_cast<std::uint32_t>(i));
  LogScope log(*this);
  proc_ = abi_.proc_new(this, options_.pid, pages_.size());
  if (!proc_) throw std::bad_alloc();
}

KernelAllocator::~KernelAllocator() { release(); }

int KernelAllocator::map(std::size_t vma_length, std::uint64_t vm_start) {
  LogScope log(*this);
  if (!proc_) return -EBUSY;
  if (vma_length < page_size_) return -EINVAL;
  // The kernel's vma is the client's; its length as far as the memfd reaches (S1.4: the file
  // uses 4 MiB of it at most).
  const std::size_t length = std::min(vma_length, file_.size()) / page_size_ * page_size_;
  const std::uint64_t base = vm_start != 0 ? vm_start : kStandInBase;
  const int ret = abi_.mmap(proc_, base, length);
  if (ret != 0) return ret;
  kernel_base_ = base;
  vm_start_.store(vm_start, std::memory_order_release);
  size_.store(std::min(length, kMaxBufferSpace), std::memory_order_release);
  ever_mapped_.store(true, std::memory_order_release);
  mapped_.store(true, std::memory_order_release);
  return 0;
}

void KernelAllocator::unmap() {
  LogScope log(*this);
  if (!proc_ || !mapped_.exchange(false)) return;
  abi_.munmap(proc_);
}

KernelAllocator::KernelBuffer* KernelAllocator::wrap(cused_kbuf* kbuf, pid_t sender_pid) {
  cused_kbuf_info info{};
  abi_.buf_info(proc_, kbuf, &info);
  auto handle = std::make_unique<KernelBuffer>();
  KernelBuffer& buffer = *handle;
  buffer.kbuf = kbuf;
  buffer.offset_ = info.user_data - kernel_base_;
  buffer.size_ = info.size;
  buffer.data_size_ = info.data_size;
  buffer.offsets_size_ = info.offsets_size;
  buffer.extra_buffers_size_ = info.extra_buffers_size;
  buffer.pid_ = info.pid != 0 ? info.pid : sender_pid;
  buffer.async_transaction_ = info.async_transaction != 0;
  buffer.oneway_spam_suspect_ = info.oneway_spam_suspect != 0;
  abi_.buf_set_cookie(kbuf, &buffer);
  sync::LockGuard guard(buffers_lock_);
  buffers_[buffer.offset_] = std::move(handle);
  return &buffer;
}

NewBufferResult KernelAllocator::new_buffer(std::size_t data_size, std::size_t offsets_size,
                                            std::size_t extra_buffers_size, bool is_async,
                                            pid_t sender_pid) {
  LogScope log(*this);
  if (!proc_) return {nullptr, -ESRCH};
  int error = 0;
  cused_kbuf* kbuf = abi_.new_buf(proc_, data_size, offsets_size, extra_buffers_size,
                                  is_async ? 1 : 0, sender_pid, &error);
  if (!kbuf) return {nullptr, error};
  try {
    return {wrap(kbuf, sender_pid), 0};
  } catch (const std::bad_alloc&) {
    abi_.free_buf(proc_, kbuf);
    return {nullptr, -ENOMEM};
  }
}

FreeLookup KernelAllocator::prepare_to_free(std::uint64_t user_address) {
  const std::uint64_t start = vm_start();
  if (user_address < start || user_address - start >= size()) return {nullptr, -ENOENT};
  return prepare_to_free_offset(user_address - start);
}

FreeLookup KernelAllocator::prepare_to_free_offset(std::size_t offset) {
  LogScope log(*this);
  if (!proc_) return {nullptr, -ENOENT};
  {
    // The engine set allow_user_free on its handle; the kernel's check reads the kernel's flag:
    // the first BC_FREE_BUFFER that takes the handle's flag sets the kernel's.
    cused_kbuf* allowed = nullptr;
    {
      sync::LockGuard guard(buffers_lock_);
      auto it = buffers_.find(offset);
      if (it != buffers_.end() && it->second->take_allow_user_free()) allowed = it->second->kbuf;
    }
    // Outside buffers_lock_: the glue takes the allocator's lock for it.
    if (allowed) abi_.buf_set(proc_, allowed, CUSED_KBUF_ALLOW_USER_FREE, 1);
  }
  int error = 0;
  cused_kbuf* kbuf = abi_.prepare_to_free(proc_, kernel_base_ + offset, &error);
  if (!kbuf) return {nullptr, error};
  cused_kbuf_info info{};
  abi_.buf_info(proc_, kbuf, &info);
  return {static_cast<KernelBuffer*>(info.cookie), 0};
}

void KernelAllocator::free_buffer(Buffer& buffer) {
  LogScope log(*this);
  auto& handle = static_cast<KernelBuffer&>(buffer);
  cused_kbuf* kbuf = handle.kbuf;
  abi_.buf_set(proc_, kbuf, CUSED_KBUF_DEBUG_ID, handle.debug_id());
  abi_.buf_set(proc_, kbuf, CUSED_KBUF_CLEAR_ON_FREE, handle.clear_on_free() ? 1 : 0);
  std::unique_ptr<KernelBuffer> owned;
  {
    sync::LockGuard guard(buffers_lock_);
    auto it = buffers_.find(handle.offset());
    if (it != buffers_.end() && it->second.get() == &handle) {
      owned = std::move(it->second);
      buffers_.erase(it);
    }
  }
  // Out of the map before the kernel frees it: a new buffer at the same offset may follow at once.
  abi_.free_buf(proc_, kbuf);
}

int KernelAllocator::copy_to_buffer(const Buffer& buffer, std::size_t buffer_offset,
                                    const void* src, std::size_t bytes) const {
  const auto& handle = static_cast<const KernelBuffer&>(buffer);
  return abi_.copy_to_buffer(proc_, handle.kbuf, buffer_offset, src, bytes);
}

int KernelAllocator::copy_from_buffer(const Buffer& buffer, std::size_t buffer_offset, void* dst,
                                      std::size_t bytes) const {
  const auto& handle = static_cast<const KernelBuffer&>(buffer);
  return abi_.copy_from_buffer(proc_, handle.kbuf, buffer_offset, dst, bytes);
}

AllocatorStats KernelAllocator::stats() const {
  AllocatorStats stats;
  if (!proc_) return stats;
  stats.size = size();
  stats.free_async_space = abi_.free_async_space(proc_);
  stats.pages_high = abi_.pages_high(proc_);
  // The allocated buffers tile the space with the free ones between them (the file merges
  // neighbouring free buffers), so the gaps are the free buffers.
  std::size_t end = 0;
  auto gap = [&](std::size_t from, std::size_t to) {
    if (to <= from) return;
    ++stats.free_buffers;
    stats.free_bytes += to - from;
    stats.largest_free = std::max(stats.largest_free, to - from);
  };
  for_each_allocated([&](const Buffer& buffer) {
    gap(end, buffer.offset());
    ++stats.allocated_buffers;
    stats.allocated_bytes += buffer.size();
    stats.largest_allocated = std::max(stats.largest_allocated, buffer.size());
    end = buffer.offset() + buffer.size();
  });
  gap(end, stats.size);
  std::vector<PageState> states(pages_in_space());
  page_states(states);
  for (PageState state : states) {
    if (state == PageState::active) ++stats.pages.active;
    if (state == PageState::lru) ++stats.pages.lru;
    if (state == PageState::free) ++stats.pages.free;
  }
  stats.page_metadata_bytes = pages_in_space() * sizeof(void*);
  return stats;
}

std::size_t KernelAllocator::allocated_count() const {
  LogScope log(*this);
  return proc_ ? static_cast<std::size_t>(abi_.allocated_count(proc_)) : 0;
}

PageState KernelAllocator::page_state(std::size_t index) const {
  sync::LockGuard guard(lru_.lock());
  return page_state_locked(index);
}

void KernelAllocator::page_states(std::span<PageState> out) const {
  sync::LockGuard guard(lru_.lock());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = page_state_locked(i);
}

PageState KernelAllocator::page_state_locked(std::size_t index) const {
  if (index >= pages_in_space() || !pages_[index].installed()) return PageState::free;
  const Page& page = pages_[index];
  return lru_.on_lru(page) || lru_.isolated(page) ? PageState::lru : PageState::active;
}

void KernelAllocator::for_each_allocated(const std::function<void(const Buffer&)>& visit) const {
  LogScope log(*this);
  if (!proc_) return;
  struct Context {
    const KernelAllocator* self;
    const std::function<void(const Buffer&)>* visit;
  } context{this, &visit};
  abi_.for_each_allocated(
      proc_,
      [](void* ctx, const cused_kbuf* kbuf) {
        auto& c = *static_cast<Context*>(ctx);
        cused_kbuf_info info{};
        c.self->abi_.buf_info(c.self->proc_, kbuf, &info);
        if (info.cookie) (*c.visit)(*static_cast<const KernelBuffer*>(info.cookie));
      },
      &context);
}

std::string KernelAllocator::print_pages() const {
  std::string text;
  if (!proc_) return text;
  abi_.print_pages(
      proc_, [](void* ctx, const char* line) { *static_cast<std::string*>(ctx) += line; }, &text);
  return text;
}

void KernelAllocator::release() {
  if (!proc_) return;
  {
    LogScope log(*this);
    mapped_.store(false, std::memory_order_release);
    // binder_alloc_deferred_release frees every buffer, takes the pages off the LRU and frees
    // them (a page the kernel frees is punched: cused/kernel_shim/runtime.c).
    abi_.release(proc_);
  }
  // A reclaim in flight may still be finishing with a page it isolated before the release: it
  // touches this allocator until it has taken the LRU lock back, and its page counts against
  // the proc until it is freed, so the leak check waits for it too.
  for (;;) {
    const std::uint32_t epoch = lru_.reclaim_epoch();
    {
      sync::LockGuard guard(lru_.lock());
      if (reclaims_in_flight_ == 0) {
        detached_ = true;
        // After a BUG the file's release did not run (cused/kernel_shim/glue.c): its pages are
        // still on the LRU, which must not keep this allocator's.
        for (Page& page : pages_)
          if (lru_.on_lru(page)) lru_.remove(page);
        break;
      }
    }
    lru_.wait_for_reclaim_done(epoch);
  }
  abi_.free(proc_);
  proc_ = nullptr;
  {
    sync::LockGuard guard(buffers_lock_);
    buffers_.clear();
  }
  if (ever_mapped_.load()) file_.punch_hole(0, pages_.size() * page_size_);
  for (Page& page : pages_) page.set_installed(false);
}

ReclaimStep KernelAllocator::reclaim_page(Page& page, const ReclaimHook& hook) {
  if (detached_ || !proc_) return ReclaimStep::skipped;
  ++reclaims_in_flight_;
  const ReclaimContext saved = reclaiming;
  reclaiming = {this, page.index(), hook ? &hook : nullptr};
  selected_kernel_lru() = &lru_;
  const int reclaimed = abi_.reclaim_page(proc_, page.index());
  reclaiming = saved;
  if (reclaimed) lru_.end_isolation(page);
  PageLru& lru = lru_;
  --reclaims_in_flight_;
  lru.reclaim_done();
  return reclaimed ? ReclaimStep::reclaimed : ReclaimStep::skipped;
}

int KernelAllocator::install_page(std::size_t index) {
  if (index >= pages_.size()) return -EFAULT;
  const auto since = trace::start();
  if (file_.populate(index * page_size_, page_size_) != 0) return -ENOMEM;
  if (options_.install_latency.count() > 0 && options_.timer)
    options_.timer->sleep(options_.install_latency);
  pages_[index].set_installed(true);
  trace::emit_since(since, TraceEventType::kPageInstall, options_.pid, index, std::size_t{1});
  return 0;
}

void KernelAllocator::punch_page(std::size_t index) {
  if (index >= pages_.size()) return;
  const bool by_shrinker = reclaiming.allocator == this && reclaiming.index == index;
  if (by_shrinker && reclaiming.hook) (*reclaiming.hook)(ReclaimPoint{*this, index});
  const auto since = trace::start();
  file_.punch_hole(index * page_size_, page_size_);
  pages_[index].set_installed(false);
  if (by_shrinker) trace::emit_since(since, TraceEventType::kPageReclaim, options_.pid, index);
}

// The file's LRU items are per struct page (6.14 on), cused's per index: a file that holds two
// pages at one index (a broken patch, tests/kernel-designs/patches/7.2-negative-*) links the
// index twice or unlinks it once too often. cused's view keeps one link per index and the daemon
// keeps running; the checks (contents, leaks, WARN_ON) report what the file did.
void KernelAllocator::lru_link(std::size_t index) {
  if (!lru_.on_lru(pages_[index])) lru_.add(pages_[index]);
}
void KernelAllocator::lru_unlink(std::size_t index) {
  if (lru_.on_lru(pages_[index])) lru_.remove(pages_[index]);
}
void KernelAllocator::lru_isolate(std::size_t index) {
  if (lru_.on_lru(pages_[index])) lru_.isolate(pages_[index]);
}

void KernelAllocator::trace(cused_ktrace event, std::size_t index) const {
  if (!trace::enabled()) return;
  static constexpr TraceEventType kTypes[] = {
      TraceEventType::kAllocLruStart,  TraceEventType::kAllocLruEnd,
      TraceEventType::kFreeLruStart,   TraceEventType::kFreeLruEnd,
      TraceEventType::kAllocPageStart, TraceEventType::kAllocPageEnd,
      TraceEventType::kUnmapUserStart, TraceEventType::kUnmapUserEnd,
  };
  // binder_unmap_kernel_*: a kernel mapping cused does not have (core/trace_events.h).
  if (static_cast<std::size_t>(event) >= std::size(kTypes)) return;
  trace::emit(kTypes[event], options_.pid, index);
}

void KernelAllocator::trace_range(bool allocate, std::size_t offset, std::size_t size) const {
  trace::emit(TraceEventType::kUpdatePageRange, options_.pid, allocate, offset, size);
}

void KernelAllocator::log(std::string line) { pending_log.push_back(std::move(line)); }

void KernelAllocator::report(cused_kreport kind, const char* text) {
  const std::string line = std::string("kernel ") + object_.name + ": " + text;
  std::fprintf(stderr, "cused: %s\n", line.c_str());
  std::lock_guard guard(reports_mutex_);
  unsigned long& count = kind == CUSED_KREPORT_ATOMIC_SLEEP ? reports_.atomic_sleep
                         : kind == CUSED_KREPORT_LEAK       ? reports_.leak
                         : kind == CUSED_KREPORT_LOCK_LEAK  ? reports_.lock_leak
                         : kind == CUSED_KREPORT_LOCK_ORDER ? reports_.lock_order
                                                            : reports_.warn;  // WARN_ON, BUG_ON
  // The first of each kind is kept even when others filled the list.
  if (++count == 1 || reports_.first.size() < KernelReports::kKeptReports)
    reports_.first.push_back(line);
}

KernelReports KernelAllocator::reports() const {
  std::lock_guard guard(reports_mutex_);
  return reports_;
}

}  // namespace cused::core::alloc
