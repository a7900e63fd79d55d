// SPDX-License-Identifier: GPL-2.0-only
// The device variant a benchmark runs its devices with: CUSED_BENCH_VARIANT (a spec such as
// "alloc_lock=kernel:7.2", docs/variants.md), so that two designs are measured by the same
// binary alternated in one run (docs/kernel-designs.md, "Cost"). Kernel designs are resolved as
// the daemon resolves them (CUSED_KERNEL_TREES, CUSED_KERNEL_SHIM, CUSED_KERNEL_CACHE).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/device_variant.h"
#include "cused/host/kernel_design_loader.h"

namespace cused::bench {

inline core::DeviceOptions bench_variant() {
  static const core::DeviceOptions options = [] {
    host::enable_kernel_designs();
    const char* spec = std::getenv("CUSED_BENCH_VARIANT");
    if (!spec || !*spec) return core::DeviceOptions{};
    auto parsed = core::parse_device_variant(spec, {}, [](const std::string& message) {
      std::fprintf(stderr, "CUSED_BENCH_VARIANT: %s\n", message.c_str());
    });
    if (!parsed) std::exit(2);
    std::fprintf(stderr, "variant: %s\n", core::to_string(*parsed).c_str());
    return *parsed;
  }();
  return options;
}

}  // namespace cused::bench
