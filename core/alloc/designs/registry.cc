// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/designs/registry.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <mutex>
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

constexpr std::size_t kBuiltin = std::size(kDesigns);

// The rows: cused's own, then the loaded ones. Rows are appended under `mutex` and published by
// `count`; a published row never changes, so readers take no lock.
struct Table {
  Table() { std::copy(std::begin(kDesigns), std::end(kDesigns), rows.begin()); }
  std::array<Design, kBuiltin + kMaxLoadedDesigns> rows{};
  std::atomic<std::size_t> count{kBuiltin};
  std::mutex mutex;
  std::deque<std::string> strings;  // the loaded rows' names and descriptions
  DesignResolver resolver = nullptr;
  std::string last_error;
};

Table& table() {
  static Table instance;
  return instance;
}

}  // namespace

LockVariant Design::variant() const {
  return LockVariant::at(static_cast<std::uint8_t>(this - table().rows.data()));
}

std::span<const Design> designs() {
  Table& t = table();
  return {t.rows.data(), t.count.load(std::memory_order_acquire)};
}

// The table's rows, not kDesigns: Design::variant() is a row's index in the table.
std::span<const Design> builtin_designs() { return {table().rows.data(), kBuiltin}; }

const Design* find_design(std::string_view name) {
  std::span<const Design> rows = designs();
  auto it = std::find_if(rows.begin(), rows.end(),
                         [&](const Design& design) { return design.name == name; });
  return it == rows.end() ? nullptr : &*it;
}

const Design* find_design_by_trace_id(std::uint64_t trace_id) {
  std::span<const Design> rows = designs();
  auto it = std::find_if(rows.begin(), rows.end(),
                         [&](const Design& design) { return design.trace_id == trace_id; });
  return it == rows.end() ? nullptr : &*it;
}

const Design& design_of(LockVariant lock) { return table().rows[lock.index()]; }

const Design* add_design(std::string_view name, std::string_view description, std::string_view doc,
                         Design::Factory make) {
  Table& t = table();
  std::lock_guard guard(t.mutex);
  const std::size_t count = t.count.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < count; ++i)
    if (t.rows[i].name == name) return &t.rows[i];
  if (count == t.rows.size()) return nullptr;
  Design& row = t.rows[count];
  row.name = t.strings.emplace_back(name);
  row.description = t.strings.emplace_back(description);
  row.trace_id = static_cast<std::uint8_t>(kFirstLoadedTraceId + (count - kBuiltin));
  row.racy_on_purpose = false;
  row.doc = doc;
  row.make = make;
  t.count.store(count + 1, std::memory_order_release);
  return &row;
}

void set_design_resolver(DesignResolver resolver) {
  Table& t = table();
  std::lock_guard guard(t.mutex);
  t.resolver = resolver;
}

std::string last_resolve_error() {
  Table& t = table();
  std::lock_guard guard(t.mutex);
  return t.last_error;
}

namespace {

const Design* resolve(std::string_view name) {
  Table& t = table();
  DesignResolver resolver;
  {
    std::lock_guard guard(t.mutex);
    resolver = t.resolver;
  }
  if (!resolver) return nullptr;
  std::string error;
  const Design* design = resolver(name, error);
  if (!design) {
    std::lock_guard guard(t.mutex);
    t.last_error = std::move(error);
  }
  return design;
}

}  // namespace

// variant.h's functions of a design's name.
LockVariant LockVariant::named(std::string_view name) {
  if (auto lock = parse_lock_variant(name)) return *lock;
  throw std::invalid_argument("no allocator design named " + std::string(name));
}

std::string_view to_string(LockVariant lock) { return design_of(lock).name; }

std::optional<LockVariant> parse_lock_variant(std::string_view text) {
  if (const Design* design = find_design(text)) return design->variant();
  if (const Design* design = resolve(text)) return design->variant();
  return std::nullopt;
}

std::string lock_variant_names(std::string_view separator) {
  std::string names;
  for (const Design& design : designs()) {
    if (!names.empty()) names += separator;
    names += design.name;
  }
  if (!names.empty()) names += separator;
  names += "kernel:TREE";
  return names;
}

std::unique_ptr<Allocator> make_allocator(BufferFile& file, Variant variant, PageLru& lru,
                                          AllocatorOptions options) {
  const Design& design = design_of(variant.lock);
  return design.make(file, variant, lru, std::move(options), design.trace_id);
}

}  // namespace cused::core::alloc
