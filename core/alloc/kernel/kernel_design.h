// SPDX-License-Identifier: GPL-2.0-only
// Kernel designs in the registry (alloc_lock=kernel:TREE): a loaded KernelObject becomes a row
// of designs/registry.h whose allocators are KernelAllocators over that object. The object's
// shrinker init runs once, here, with cused's runtime (kernel_runtime.h).
#pragma once

#include <string>

#include "core/alloc/designs/registry.h"
#include "core/alloc/kernel/kernel_object.h"

namespace cused::core::alloc {

// Registers `object` (init included) under object.name; returns the row, or nullptr with `error`
// set (the object's init failed, or the registry is full). The same name twice returns the row
// of the first.
const Design* register_kernel_design(KernelObject object, std::string& error);

// The object behind a kernel design's row, or nullptr for cused's own designs.
const KernelObject* kernel_object_of(LockVariant lock);

}  // namespace cused::core::alloc
