#include "tests/diff/event_deviations.h"

namespace cused::diff {

namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// "binder_alloc_page_start: proc=s1 page_index=3" -> "proc=s1 page_index=3".
std::string_view page_of(std::string_view event, std::string_view name) {
  return starts_with(event, name) ? event.substr(name.size()) : std::string_view{};
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

}  // namespace

std::optional<EventDeviationMatch> known_event_deviation(std::span<const std::string> kernel,
                                                         std::size_t k,
                                                         std::span<const std::string> cused,
                                                         std::size_t c) {
  return pages_installed_at_once(kernel, k, cused, c);
}

}  // namespace cused::diff
