// The allocator designs cused can switch between (docs/design.md section 4). Chosen per allocator
// instance at construction, so two devices (or two generations of one) can run side by side.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/lock_trace.h"

namespace cused::core::alloc {

// How buffer metadata, page installation and the shrinker's reclaim are serialized.
enum class LockVariant : std::uint8_t {
  // One sleeping lock covers metadata and page installation; the shrinker only try-locks it.
  // The upstream baseline.
  mutex,
  // Metadata under a spinlock; installation and reclaim are not serialized against each other.
  // The racy design, kept on purpose: a page reclaimed while a new buffer reuses it loses data.
  spin,
  // Spinlock for metadata plus an install mutex held across page installation and across the
  // shrinker's clear-and-punch. An allocation that meets a page the shrinker has isolated rolls
  // back, waits for the shrinker and retries (the RFC fix).
  spin_install,
};

// The cused_lock_* events print a lock's design by this enum's value (core/lock_trace.h).
static_assert(static_cast<std::uint8_t>(LockVariant::mutex) == kSleepingLockDesign);

// When the per-page metadata of a proc's space is allocated.
enum class PageTableVariant : std::uint8_t {
  eager,  // the whole mapping at map() (kcalloc)
  lazy,   // in chunks, when a buffer first covers a chunk (kvcalloc-style, pay as you go)
};

struct Variant {
  LockVariant lock = LockVariant::mutex;
  PageTableVariant pages = PageTableVariant::eager;
  friend bool operator==(const Variant&, const Variant&) = default;
};

// The spellings used on command lines and in stats: "mutex", "spin", "spin-install"; "eager",
// "lazy"; a whole variant as "alloc_lock=spin-install,pages=lazy".
std::string_view to_string(LockVariant lock);
std::string_view to_string(PageTableVariant pages);
std::string to_string(const Variant& variant);
std::optional<LockVariant> parse_lock_variant(std::string_view text);
std::optional<PageTableVariant> parse_page_table_variant(std::string_view text);

}  // namespace cused::core::alloc
