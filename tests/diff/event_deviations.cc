// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/event_deviations.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace cused::diff {

namespace {

// "binder_alloc_page_start: proc=s1 page_index=3" -> "proc=s1 page_index=3".
std::string_view page_of(std::string_view event, std::string_view name) {
  return event.starts_with(name) ? event.substr(name.size()) : std::string_view{};
}

constexpr std::string_view kPageStart = "binder_alloc_page_start: ";
constexpr std::string_view kPageEnd = "binder_alloc_page_end: ";

// The run's length when cused's events from `c` are N >= 2 page starts then their N ends and the
// kernel's from `k` are the same pages' start/end pairs, in the same order, nothing between.
std::size_t page_run(std::span<const std::string> kernel, std::size_t k,
                     std::span<const std::string> cused, std::size_t c) {
  std::size_t run = 0;
  while (c + run < cused.size() && !page_of(cused[c + run], kPageStart).empty()) run++;
  if (run < 2 || c + 2 * run > cused.size() || k + 2 * run > kernel.size()) return 0;
  for (std::size_t i = 0; i < run; i++) {
    std::string_view page = page_of(cused[c + i], kPageStart);
    if (page_of(cused[c + run + i], kPageEnd) != page ||
        page_of(kernel[k + 2 * i], kPageStart) != page ||
        page_of(kernel[k + 2 * i + 1], kPageEnd) != page)
      return 0;
  }
  return run;
}

// docs/tracing.md "Several pages installed at once": cused installs a run of missing pages with
// one system call, so its run's `binder_alloc_page_start` events come before their `_end`s, where
// the kernel installs page by page (start, end, start, end). The comparison has matched the run's
// first start already (the same on both sides) when it meets the difference at the kernel's
// first end: the run is read from there.
std::optional<EventDeviationMatch> pages_installed_at_once(std::span<const std::string> kernel,
                                                           std::size_t k,
                                                           std::span<const std::string> cused,
                                                           std::size_t c) {
  if (k == 0 || c == 0 || page_of(kernel[k - 1], kPageStart).empty() ||
      kernel[k - 1] != cused[c - 1])
    return std::nullopt;
  std::size_t run = page_run(kernel, k - 1, cused, c - 1);
  if (run == 0) return std::nullopt;
  return EventDeviationMatch{"pages-installed-at-once", 2 * run - 1, 2 * run - 1};
}

// One binder_update_page_range and the LRU events of its pages after it.
struct PageRange {
  std::string proc;
  int allocate = 0;
  unsigned long offset = 0, size = 0;
  std::vector<std::string> lru;  // "binder_free_lru_start: proc=s0 page_index=0", ...
  std::size_t events = 0;        // the events it spans
};

std::optional<PageRange> page_range_at(std::span<const std::string> events, std::size_t at) {
  if (at >= events.size()) return std::nullopt;
  char proc[64];
  PageRange range;
  if (std::sscanf(events[at].c_str(),
                  "binder_update_page_range: proc=%63s allocate=%d offset=%lu size=%lu", proc,
                  &range.allocate, &range.offset, &range.size) != 4)
    return std::nullopt;
  range.proc = proc;
  std::string page_events = " proc=" + range.proc + " page_index=";
  std::size_t i = at + 1;
  while (
      i < events.size() &&
      (events[i].starts_with("binder_free_lru_") || events[i].starts_with("binder_alloc_lru_")) &&
      events[i].find(page_events) != std::string::npos)
    range.lru.push_back(events[i++]);
  range.events = i - at;
  return range;
}

// docs/tracing.md "Page ranges": the kernel's binder_update_page_range prints the pages a buffer
// has to itself (binder_lru_freelist_del/_add of PAGE_ALIGN(start) up to the last page boundary
// inside it: empty when the buffer lies within a page it shares, and traced even then), and a
// free adds each edge page that a merge with a free neighbour leaves unused, one range each;
// cused's allocator counts each page's buffers and prints the buffer's whole page range once.
// Accepted when the kernel's one or more ranges of one proc and direction (allocate=) all lie
// inside cused's one range of that proc and direction (an empty one where its pages would
// begin), cused's range reaches at most one page past the kernel's on each side (the page the
// buffer shares), and the pages taken from or put on the LRU are the same, in the same order.
std::optional<EventDeviationMatch> buffer_page_ranges(std::span<const std::string> kernel,
                                                      std::size_t k,
                                                      std::span<const std::string> cused,
                                                      std::size_t c) {
  auto ours = page_range_at(cused, c);
  if (!ours) return std::nullopt;
  constexpr unsigned long kPage = 4096;
  const unsigned long our_end = ours->offset + ours->size;
  std::vector<std::string> kernel_lru;
  unsigned long low = our_end, high = ours->offset;  // the kernel's ranges' extent
  std::size_t at = k;
  for (auto theirs = page_range_at(kernel, at);
       theirs && theirs->allocate == ours->allocate && theirs->proc == ours->proc;
       theirs = page_range_at(kernel, at)) {
    // An empty range (a buffer within a page it shares) still names where its pages would
    // begin: inside cused's range or at its end.
    bool inside = theirs->offset >= ours->offset && theirs->offset + theirs->size <= our_end;
    if (!inside) return std::nullopt;
    low = std::min(low, theirs->offset), high = std::max(high, theirs->offset + theirs->size);
    kernel_lru.insert(kernel_lru.end(), theirs->lru.begin(), theirs->lru.end());
    at += theirs->events;
  }
  if (at == k || kernel_lru != ours->lru) return std::nullopt;
  // cused's range is the buffer's pages: beyond the kernel's whole pages at most the page the
  // buffer shares on each side.
  if (ours->offset + kPage < low / kPage * kPage ||
      our_end > (high + kPage - 1) / kPage * kPage + kPage)
    return std::nullopt;
  return EventDeviationMatch{"page-ranges", at - k, ours->events};
}

constexpr std::string_view kWaitForWork = "binder_wait_for_work: ";
constexpr std::string_view kReadInterrupted = "binder_read_done: ret=-4";

// docs/tracing.md "A woken read that is then interrupted": a parked read woken by work that
// turns out to give it nothing (node work with no change to report, as a debugfs read's dropped
// node reference queues), then interrupted by a signal. The kernel's woken reader races the
// signal and, where the signal is pending first, leaves its wait with -EINTR at once; cused runs
// the woken read on the waking daemon thread, which finds nothing and waits again, so its task
// prints the same `binder_wait_for_work` twice before `binder_read_done: ret=-4`. Accepted only
// as that: one repeat of the wait event just matched, then the kernel's interrupted read_done.
std::optional<EventDeviationMatch> woken_read_interrupted(std::span<const std::string> kernel,
                                                          std::size_t k,
                                                          std::span<const std::string> cused,
                                                          std::size_t c) {
  if (k == 0 || c == 0 || k >= kernel.size() || c + 1 >= cused.size()) return std::nullopt;
  const std::string& wait = cused[c - 1];
  if (!wait.starts_with(kWaitForWork) || kernel[k - 1] != wait || cused[c] != wait ||
      kernel[k] != kReadInterrupted || cused[c + 1] != kReadInterrupted)
    return std::nullopt;
  return EventDeviationMatch{"woken-read-interrupted", 0, 1};
}

}  // namespace

std::optional<EventDeviationMatch> known_event_deviation(std::span<const std::string> kernel,
                                                         std::size_t k,
                                                         std::span<const std::string> cused,
                                                         std::size_t c) {
  if (auto match = pages_installed_at_once(kernel, k, cused, c)) return match;
  if (auto match = woken_read_interrupted(kernel, k, cused, c)) return match;
  return buffer_page_ranges(kernel, k, cused, c);
}

}  // namespace cused::diff
