// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/kernel/kernel_design.h"

#include <array>
#include <deque>
#include <mutex>

#include "core/alloc/kernel/kernel_allocator.h"
#include "core/alloc/kernel/kernel_runtime.h"

namespace cused::core::alloc {

namespace {

// The loaded objects, by their row's trace id (rows are never removed, objects never unloaded).
struct Loaded {
  std::mutex mutex;
  std::deque<KernelObject> objects;
  std::array<const KernelObject*, kMaxLoadedDesigns> by_row{};
};

Loaded& loaded() {
  static Loaded instance;
  return instance;
}

const KernelObject* object_of_trace_id(std::uint8_t trace_id) {
  if (trace_id < kFirstLoadedTraceId) return nullptr;
  const std::size_t row = trace_id - kFirstLoadedTraceId;
  Loaded& l = loaded();
  std::lock_guard guard(l.mutex);
  return row < l.by_row.size() ? l.by_row[row] : nullptr;
}

std::unique_ptr<Allocator> make(BufferFile& file, Variant variant, PageLru& lru,
                                AllocatorOptions options, std::uint8_t trace_id) {
  return std::make_unique<KernelAllocator>(*object_of_trace_id(trace_id), file, variant, lru,
                                           std::move(options), trace_id);
}

}  // namespace

const Design* register_kernel_design(KernelObject object, std::string& error) {
  if (const Design* existing = find_design(object.name)) return existing;
  Loaded& l = loaded();
  std::lock_guard guard(l.mutex);
  if (object.abi == nullptr || object.abi->abi_version != CUSED_KABI_VERSION) {
    error = "the object's ABI is not this cused's (rebuild it)";
    return nullptr;
  }
  if (const int ret = object.abi->init(&kernel_runtime()); ret != 0) {
    error = "binder_alloc_shrinker_init failed: " + std::to_string(ret);
    return nullptr;
  }
  KernelObject& kept = l.objects.emplace_back(std::move(object));
  const std::string description = "Linux " + std::string(kept.abi->kernel_version) +
                                  "'s own binder_alloc.c (" + kept.tree + ")";
  const Design* design = add_design(kept.name, description, "docs/kernel-designs.md", &make);
  if (design == nullptr) {
    error = "too many allocator designs loaded";
    return nullptr;
  }
  l.by_row[design->trace_id - kFirstLoadedTraceId] = &kept;
  return design;
}

const KernelObject* kernel_object_of(LockVariant lock) {
  return object_of_trace_id(design_of(lock).trace_id);
}

}  // namespace cused::core::alloc
