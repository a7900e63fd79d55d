// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/patched_kernel_tree.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cused/host/run_program.h"
#include "cused/host/scratch_directory.h"

namespace cused::host {

namespace fs = std::filesystem;

namespace {

// What a kernel design is built from (kernel_design_loader.h): a patched copy needs no more.
// Symlinks are copied as such: tools/include has one that points outside tools/.
constexpr const char* kTreeParts[] = {"drivers/android", "tools/lib/rbtree.c", "tools/include",
                                      "Makefile", ".version"};

// patch's output on one line: "patching file F; Hunk #1 FAILED at 120.; ...".
std::string one_line(const fs::path& log) {
  std::ifstream in(log);
  std::string joined;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) joined += (joined.empty() ? "" : "; ") + line;
  return joined.empty() ? "(no output)" : joined;
}

// Copies `tree`'s parts into `copy` and applies `patches`; false with `error` set.
bool patch_copy(const fs::path& tree, const std::vector<fs::path>& patches, const fs::path& copy,
                std::string& error) {
  std::error_code ec;
  for (const char* part : kTreeParts) {
    if (!fs::exists(tree / part)) continue;
    fs::create_directories((copy / part).parent_path(), ec);
    fs::copy(tree / part, copy / part,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
    if (ec) {
      error = "cannot copy " + (tree / part).string() + ": " + ec.message();
      return false;
    }
  }
  for (const fs::path& patch : patches) {
    const fs::path log = copy / "patch.log";
    fs::remove(log, ec);
    // -N: a patch already applied is a failure, not a question; -r -: no .rej files.
    if (!run_program({"patch", "-p1", "-N", "-r", "-", "-d", copy.string(), "-i",
                      fs::absolute(patch).string()},
                     log)) {
      error =
          patch.string() + " does not apply to " + tree.string() + " (patch -p1): " + one_line(log);
      return false;
    }
  }
  return true;
}

}  // namespace

std::string patched_tree_label(const fs::path& tree, const std::vector<fs::path>& patches) {
  std::string label = tree.string();
  for (const fs::path& patch : patches) label += "+" + patch.filename().string();
  return label;
}

std::optional<KernelBuild> build_patched_kernel_design(const fs::path& tree,
                                                       const std::vector<fs::path>& patches,
                                                       const KernelDesignPaths& paths,
                                                       std::string& error) {
  try {
    // Removed when this returns: the object is loaded from the cache, never from the copy.
    ScratchDirectory copy(paths.cache, "patched");
    if (!patch_copy(tree, patches, copy.path(), error)) return std::nullopt;
    return build_kernel_design(copy.path(), paths, error, patched_tree_label(tree, patches));
  } catch (const std::exception& e) {  // the scratch folder could not be made
    error = e.what();
    return std::nullopt;
  }
}

}  // namespace cused::host
