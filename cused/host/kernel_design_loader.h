// SPDX-License-Identifier: GPL-2.0-only
// Kernel designs at the user's site (docs/kernel-designs.md): alloc_lock=kernel:TREE builds
// TREE/drivers/android/binder_alloc.c, unmodified, with the kernel shim installed beside cused
// (cused/kernel_shim/: the emulated kernel API, its runtime and the per-version glue) into a shared
// object, caches it under the hash of everything that went into it, loads it and registers it
// as an allocator design (core/alloc/kernel/kernel_design.h).
//
// TREE is a path to a kernel tree (at least drivers/android/binder_alloc{.c,.h},
// binder_trace.h, tools/lib/rbtree.c and tools/include), or a name under CUSED_KERNEL_TREES
// (kernel:7.2 is $CUSED_KERNEL_TREES/7.2/src, as tools/bootstrap fetches them).
// kernel:TREE+PATCH[+PATCH...] is that tree with the patches applied (patched_kernel_tree.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/alloc/kernel/kernel_object.h"

namespace cused::host {

struct KernelDesignPaths {
  std::filesystem::path shim;   // $CUSED_KERNEL_SHIM, else the installed kernel_shim
  std::filesystem::path trees;  // $CUSED_KERNEL_TREES (for names), may be empty
  std::filesystem::path cache;  // $CUSED_KERNEL_CACHE, else $XDG_CACHE_HOME/cused/kernel-designs
  std::string cc;               // $CC (e.g. "ccache gcc"), else "cc"
};
KernelDesignPaths kernel_design_paths();

// The tree a design name ("kernel:7.2", "kernel:/src/linux") means; nullopt with `error` set.
std::optional<std::filesystem::path> kernel_tree_of(std::string_view name,
                                                    const KernelDesignPaths& paths,
                                                    std::string& error);

// What a design name means: its tree, and the patches applied to it (none for kernel:TREE).
struct KernelDesignSource {
  std::filesystem::path tree;
  std::vector<std::filesystem::path> patches;  // as written: relative to the working directory
  std::string label;                           // the tree, or TREE+NAME.patch... for reports
};
// kernel:TREE[+PATCH]...: the tree is the shortest '+'-separated prefix that is one (so a tree
// whose path holds a '+' still works), each part after it a patch file that must exist; nullopt
// with `error` set.
std::optional<KernelDesignSource> kernel_source_of(std::string_view name,
                                                   const KernelDesignPaths& paths,
                                                   std::string& error);

struct KernelBuild {
  std::filesystem::path object;
  std::string version;  // the tree's, e.g. "7.2.8"
  bool cached = false;  // found in the cache: nothing was compiled
};
// Builds (or finds in the cache) the object of `tree`; nullopt with `error` set (the compiler's
// messages included). `shown_as`, when given, is the name the file's reports give the tree (its
// __FILE__ is mapped to it, and it is part of the hash): a patched copy's label.
std::optional<KernelBuild> build_kernel_design(const std::filesystem::path& tree,
                                               const KernelDesignPaths& paths, std::string& error,
                                               const std::string& shown_as = "");

// The object of a design name, kernel:TREE or kernel:TREE+PATCH...: built (patched in a scratch
// copy that is removed before this returns) or found in the cache; nullopt with `error` set.
std::optional<KernelBuild> build_kernel_design_of(const KernelDesignSource& source,
                                                  const KernelDesignPaths& paths,
                                                  std::string& error);

// Loads a built object as the design `name`.
std::optional<core::alloc::KernelObject> load_kernel_design(std::string name,
                                                            const std::filesystem::path& tree,
                                                            const std::filesystem::path& object,
                                                            std::string& error);

// Lets alloc_lock= (and every other parse of a design name) accept kernel:TREE: the registry's
// resolver builds, loads and registers the design the first time its name is used.
void enable_kernel_designs();

}  // namespace cused::host
