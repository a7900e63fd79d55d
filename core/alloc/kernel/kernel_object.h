// SPDX-License-Identifier: GPL-2.0-only
// One loaded kernel design: the object built from a kernel tree's binder_alloc.c with
// cused/kernel_shim/ (docs/kernel-designs.md), seen through its C ABI (uapi/
// cused_kernel_abi.h). The host builds and loads it (cused/host/kernel_design_loader.h); core
// holds it for the process's lifetime, as a loaded module stays loaded.
#pragma once

#include <memory>
#include <string>

#include "uapi/cused_kernel_abi.h"

namespace cused::core::alloc {

struct KernelObject {
  std::string name;  // alloc_lock=<name>, e.g. "kernel:7.2"
  std::string tree;  // the kernel tree it was built from
  std::string path;  // the shared object
  const cused_kabi* abi = nullptr;
  std::shared_ptr<void> handle;  // keeps the object loaded
};

}  // namespace cused::core::alloc
