// SPDX-License-Identifier: GPL-2.0-only
// The allocator designs cused can switch between (docs/design.md section 4). Chosen per allocator
// instance at construction, so two devices (or two generations of one) can run side by side.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cused::core::alloc {

// How buffer metadata, page installation and the shrinker's reclaim are serialized: one allocator
// design of the registry (core/alloc/designs/registry.h), which lists them, names them and makes
// them. Held as the design's row in the registry; the default is the first row, `mutex`.
class LockVariant {
 public:
  constexpr LockVariant() = default;
  // The registered design called `name` (e.g. "spin-install"); throws std::invalid_argument for
  // a name the registry does not have. For code and tests that mean one design.
  static LockVariant named(std::string_view name);
  // The design of row `index` of the registry (index < designs().size()).
  static constexpr LockVariant at(std::uint8_t index) { return LockVariant(index); }
  constexpr std::uint8_t index() const { return index_; }
  friend constexpr auto operator<=>(const LockVariant&, const LockVariant&) = default;

 private:
  constexpr explicit LockVariant(std::uint8_t index) : index_(index) {}
  std::uint8_t index_ = 0;
};

// When the per-page metadata of a proc's space is allocated.
enum class PageTableVariant : std::uint8_t {
  eager,  // the whole mapping at map() (kcalloc)
  lazy,   // in chunks, when a buffer first covers a chunk (kvcalloc-style, pay as you go)
};

struct Variant {
  LockVariant lock;  // the registry's first design, mutex
  PageTableVariant pages = PageTableVariant::eager;
  friend bool operator==(const Variant&, const Variant&) = default;
};

// The spellings used on command lines and in stats (a design's are defined with the registry): a
// design's registered name ("mutex", "spin-install", ...); "eager", "lazy"; a whole variant as
// "alloc_lock=spin-install,pages=lazy".
std::string_view to_string(LockVariant lock);
std::string_view to_string(PageTableVariant pages);
std::string to_string(const Variant& variant);
std::optional<LockVariant> parse_lock_variant(std::string_view text);
// Every registered design's name, joined by `separator`: what alloc_lock= accepts.
std::string lock_variant_names(std::string_view separator = "|");
std::optional<PageTableVariant> parse_page_table_variant(std::string_view text);

}  // namespace cused::core::alloc
