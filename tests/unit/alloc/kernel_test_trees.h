// SPDX-License-Identifier: GPL-2.0-only
// What the kernel design tests share (docs/kernel-designs.md): the fetched tree they build
// (tools/bootstrap's .deps/kernel, passed as CUSED_KERNEL_TREES), and private folders for their
// caches, so that what a test builds and leaves is all that is in its cache.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cused::host::kernel_test {

// $CUSED_KERNEL_TREES/VERSION/src when tools/bootstrap fetched it; nullopt, and the test skips,
// when not.
inline std::optional<std::filesystem::path> fetched_kernel_tree(const std::string& version) {
  const char* trees = std::getenv("CUSED_KERNEL_TREES");
  if (!trees) return std::nullopt;
  const std::filesystem::path tree = std::filesystem::path(trees) / version / "src";
  if (!std::filesystem::exists(tree / "drivers/android/binder_alloc.c")) return std::nullopt;
  return tree;
}

// A new empty folder in the temporary directory, named PREFIX and a unique suffix.
inline std::filesystem::path make_temp_dir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
  return pattern;
}

// The cache's entries other than built objects: scratch folders or logs left behind.
inline std::vector<std::string> cache_leftovers(const std::filesystem::path& cache) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(cache))
    if (entry.path().extension() != ".so") names.push_back(entry.path().filename());
  return names;
}

}  // namespace cused::host::kernel_test
