// SPDX-License-Identifier: GPL-2.0-only
// Kernel designs as binder-ab sees them (docs/kernel-designs.md): alloc_lock=kernel:TREE and
// kernel:TREE+PATCH... are names that the daemon binder-ab starts (or the one serving the
// devices) builds and loads; binder-ab only passes them on and compares them with what a device
// reports, so it accepts every such name as a design of that name without building it. A tree or
// patch that is not there is the daemon's error, which binder-ab shows when the block fails.
#pragma once

namespace cused::tools::ab {

// Lets binder-ab's variant parser (experiment files, A/B labels, the devices' variants) accept
// kernel:... names. Call before parsing any variant.
void accept_kernel_design_names();

}  // namespace cused::tools::ab
