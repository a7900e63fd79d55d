// SPDX-License-Identifier: GPL-2.0-only
// The exhaustive page-state scenario (the kernel's binder_alloc selftest, docs/design.md
// section 7):
// five buffers whose ends take every combination of page alignments, placed from the front and
// from the back of the space, freed in all 120 orders. After every allocation and every free the
// state of every page (S9.5, S9.12) must match a model computed here from the live buffers;
// after each layout everything is reclaimed and the memfd must hold no resident page.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <sstream>

#include "tests/unit/alloc/fixture.h"

namespace cused::core::alloc::testing {
namespace {

constexpr int kBuffers = 5;
constexpr std::size_t kSpacePages = 16;  // the largest layout ends before page 11

using Sizes = std::array<std::size_t, kBuffers>;
using Order = std::array<int, kBuffers>;
using Mask = std::bitset<kSpacePages>;

std::string describe(const Sizes& sizes, const Order& order) {
  std::ostringstream text;
  text << "sizes";
  for (std::size_t size : sizes) text << " " << size;
  text << ", free order";
  for (int index : order) text << " " << index;
  return text.str();
}

class Scenario {
 public:
  Scenario(PageLru& lru, Variant variant)
      : lru_(lru), proc_(lru, variant, kSpacePages * page_size()) {}

  static std::size_t page_size() {
    static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return size;
  }

  // Every free order for one layout, then reclaim.
  void run_layout(const Sizes& sizes) {
    Order order;
    std::iota(order.begin(), order.end(), 0);
    // The first order installs the pages; every later order allocates from the LRU (the
    // kernel selftest's second "allocate from lru" round), which must then be empty.
    do {
      alloc_all(sizes, order);
      EXPECT_EQ(lru_.size(), 0u) << describe(sizes, order);
      free_all(sizes, order);
    } while (!::testing::Test::HasFailure() && std::next_permutation(order.begin(), order.end()));
    reclaim_all(sizes);
  }

 private:
  void alloc_all(const Sizes& sizes, const Order& order) {
    for (int i = 0; i < kBuffers; ++i) {
      buffers_[i] = proc_.alloc->new_buffer(sizes[i], 0, 0, false, 1).buffer;
      ASSERT_NE(buffers_[i], nullptr) << describe(sizes, order);
      live_ |= pages_of(*buffers_[i]);
      installed_ |= pages_of(*buffers_[i]);
      check(sizes, order);
    }
  }

  void free_all(const Sizes& sizes, const Order& order) {
    for (int index : order) {
      proc_.alloc->free_buffer(*buffers_[index]);
      buffers_[index] = nullptr;
      live_.reset();
      for (Buffer* buffer : buffers_)
        if (buffer) live_ |= pages_of(*buffer);
      check(sizes, order);
    }
  }

  void reclaim_all(const Sizes& sizes) {
    lru_.reclaim();
    installed_.reset();
    check(sizes, Order{});
    EXPECT_EQ(proc_.file->resident_pages(0, kSpacePages * page_size()), 0)
        << describe(sizes, Order{});
  }

  Mask pages_of(const Buffer& buffer) const {
    Mask mask;
    std::size_t first = buffer.offset() / page_size();
    std::size_t last = (buffer.offset() + buffer.size() - 1) / page_size();
    for (std::size_t page = first; page <= last; ++page) mask.set(page);
    return mask;
  }

  // Model: a page some live buffer overlaps is active; an installed page nobody uses waits on
  // the LRU; everything else is free.
  void check(const Sizes& sizes, const Order& order) {
    std::array<PageState, kSpacePages> states;
    proc_.alloc->page_states(states);
    for (std::size_t page = 0; page < kSpacePages; ++page) {
      PageState expected = live_[page]        ? PageState::active
                           : installed_[page] ? PageState::lru
                                              : PageState::free;
      // Compare first, assert on mismatch only: this runs 15 million times per variant.
      if (states[page] != expected) {
        FAIL() << "page " << page << " is " << static_cast<int>(states[page]) << ", expected "
               << static_cast<int>(expected) << " (0 free, 1 active, 2 lru); "
               << describe(sizes, order);
      }
    }
  }

  PageLru& lru_;
  TestProc proc_;
  std::array<Buffer*, kBuffers> buffers_{};
  Mask live_, installed_;
};

// The ends of the five buffers, built the way the kernel's selftest builds them: each end is,
// relative to the previous one, in the same page unaligned, at the page boundary, in the next
// page unaligned, at the next boundary, or in the page after that.
template <typename F>
void for_each_end_combination(std::array<std::size_t, kBuffers>& ends, int index, F&& visit) {
  if (index == kBuffers) return visit(ends);
  const std::size_t page = Scenario::page_size(), step = page / 8;
  std::size_t end = index == 0 ? 0 : ends[index - 1];
  for (int align = 0; align < 5; ++align) {
    end = align % 2 ? (end + page - 1) / page * page : end + step;
    ends[index] = end;
    for_each_end_combination(ends, index + 1, visit);
  }
}

// Sanitizer builds run every 8th layout (still all placements and all orders): they are there
// for memory errors, and the whole run would take minutes. CUSED_SCENARIO_FULL=1 runs all.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kSanitized = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr int kSanitized = 1;
#else
constexpr int kSanitized = 0;
#endif
#else
constexpr int kSanitized = 0;
#endif

int layout_stride() {
  const char* full = std::getenv("CUSED_SCENARIO_FULL");
  return kSanitized && !(full && *full == '1') ? 8 : 1;
}

class ScenarioTest : public ::testing::TestWithParam<Variant> {};

TEST_P(ScenarioTest, S9_5_S9_12_EveryAlignmentEveryPlacementEveryFreeOrder) {
  PageLru lru;
  Scenario scenario(lru, GetParam());
  const std::size_t space = kSpacePages * Scenario::page_size();
  std::array<std::size_t, kBuffers> ends;
  const int stride = layout_stride();
  int layouts = 0, combination = 0;
  for_each_end_combination(ends, 0, [&](const std::array<std::size_t, kBuffers>& end) {
    if (::testing::Test::HasFailure() || combination++ % stride != 0) return;
    Sizes front, back;
    for (int i = 0; i < kBuffers; ++i) {
      front[i] = end[i] - (i == 0 ? 0 : end[i - 1]);
      back[kBuffers - 1 - i] = front[i];
    }
    // From the back: one big buffer first, so that the others end exactly at the space's end.
    back[0] += space - end[kBuffers - 1];
    scenario.run_layout(front);
    scenario.run_layout(back);
    ++layouts;
  });
  if (!::testing::Test::HasFailure()) {
    EXPECT_EQ(layouts, (5 * 5 * 5 * 5 * 5 + stride - 1) / stride);
  }
}

// Single-threaded, the designs run the same page logic; one instance of each design, the page
// tables taken in turn, keeps the run to seconds.
INSTANTIATE_TEST_SUITE_P(Variants, ScenarioTest, ::testing::ValuesIn(each_design()),
                         [](const auto& info) { return name_of(info.param); });

}  // namespace
}  // namespace cused::core::alloc::testing
