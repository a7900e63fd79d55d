// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/designs/registry.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "core/alloc/designs/mutex.h"
#include "core/alloc/designs/spin.h"
#include "core/alloc/designs/spin_install.h"
#include "core/alloc/designs/upstream.h"
#include "core/lock_trace.h"

namespace cused::core::alloc {

namespace {

template <typename D>
std::unique_ptr<Allocator> make(BufferFile& file, Variant variant, PageLru& lru,
                                AllocatorOptions options, std::uint8_t trace_id) {
  return std::make_unique<D>(file, variant, lru, std::move(options), trace_id);
}

// name, description, trace id, racy on purpose, doc, factory.
constexpr Design kDesigns[] = {
    {"mutex", "Linux 6.1: one sleeping mutex for metadata and page installation", 0, false,
     "docs/allocator.md#mutex", &make<MutexAllocator>},
    {"spin", "metadata under a spinlock, installation unordered with reclaim (racy)", 1, true,
     "docs/allocator.md#spin", &make<SpinAllocator>},
    {"spin-install", "the RFC fix: spinlock plus an install mutex, rollback and retry", 2, false,
     "docs/allocator.md#spin-install", &make<SpinInstallAllocator>},
    {"upstream", "Linux 6.14: mutex for metadata, pages installed after it, concurrently", 3, false,
     "docs/allocator.md#upstream", &make<UpstreamAllocator>},
};

constexpr bool trace_ids_unique() {
  for (std::size_t i = 0; i < std::size(kDesigns); ++i)
    for (std::size_t j = i + 1; j < std::size(kDesigns); ++j)
      if (kDesigns[i].trace_id == kDesigns[j].trace_id) return false;
  return true;
}
static_assert(trace_ids_unique(), "a trace id names one design");
// The engine's own locks (proc, node, context) print as the sleeping design: the first row.
static_assert(kDesigns[0].name == "mutex" && kDesigns[0].trace_id == kSleepingLockDesign);

}  // namespace

LockVariant Design::variant() const {
  return LockVariant::at(static_cast<std::uint8_t>(this - kDesigns));
}

std::span<const Design> designs() { return kDesigns; }

const Design* find_design(std::string_view name) {
  auto it = std::find_if(std::begin(kDesigns), std::end(kDesigns),
                         [&](const Design& design) { return design.name == name; });
  return it == std::end(kDesigns) ? nullptr : &*it;
}

const Design* find_design_by_trace_id(std::uint64_t trace_id) {
  auto it = std::find_if(std::begin(kDesigns), std::end(kDesigns),
                         [&](const Design& design) { return design.trace_id == trace_id; });
  return it == std::end(kDesigns) ? nullptr : &*it;
}

const Design& design_of(LockVariant lock) { return kDesigns[lock.index()]; }

// variant.h's functions of a design's name.
LockVariant LockVariant::named(std::string_view name) {
  if (auto lock = parse_lock_variant(name)) return *lock;
  throw std::invalid_argument("no allocator design named " + std::string(name));
}

std::string_view to_string(LockVariant lock) { return design_of(lock).name; }

std::optional<LockVariant> parse_lock_variant(std::string_view text) {
  if (const Design* design = find_design(text)) return design->variant();
  return std::nullopt;
}

std::string lock_variant_names(std::string_view separator) {
  std::string names;
  for (const Design& design : kDesigns) {
    if (!names.empty()) names += separator;
    names += design.name;
  }
  return names;
}

std::unique_ptr<Allocator> make_allocator(BufferFile& file, Variant variant, PageLru& lru,
                                          AllocatorOptions options) {
  const Design& design = design_of(variant.lock);
  return design.make(file, variant, lru, std::move(options), design.trace_id);
}

}  // namespace cused::core::alloc
