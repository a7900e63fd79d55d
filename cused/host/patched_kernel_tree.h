// SPDX-License-Identifier: GPL-2.0-only
// A kernel tree with your patches, as a design (docs/kernel-designs.md, "Your patch as a
// design"): alloc_lock=kernel:TREE+PATCH[+PATCH...] and `cused check-design TREE --patch PATCH`
// copy what a kernel design is built from (kernel_design_loader.h) into a scratch folder of the
// cache, apply each patch there with patch -p1, in order, build the copy, and remove it. The tree
// itself is never touched; the object is cached under the hash of the patched sources.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cused/host/kernel_design_loader.h"

namespace cused::host {

// What reports call the patched file's tree: "TREE+NAME.patch..." (each patch's file name).
std::string patched_tree_label(const std::filesystem::path& tree,
                               const std::vector<std::filesystem::path>& patches);

// Builds (or finds in the cache) `tree` patched with `patches`; nullopt with `error` set when a
// patch does not apply (patch's own words: the file and the hunk that failed) or the patched
// file does not compile.
std::optional<KernelBuild> build_patched_kernel_design(
    const std::filesystem::path& tree, const std::vector<std::filesystem::path>& patches,
    const KernelDesignPaths& paths, std::string& error);

}  // namespace cused::host
