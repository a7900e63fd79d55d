// SPDX-License-Identifier: GPL-2.0-only
// The kernel designs' object cache (cused/host/kernel_design_loader.h, docs/kernel-designs.md):
// an object built on one machine serves on another that has no compiler, as the tests/vm guest
// has none (tests/designs/vm-tests builds on the host and brings the cache in); a design whose
// object is not in the cache fails there with a message that names the missing compiler and the
// tree, and leaves nothing in the cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <variant>

#include "core/alloc/designs/registry.h"
#include "core/alloc/kernel/kernel_design.h"
#include "core/device_variant.h"
#include "cused/host/kernel_design_loader.h"
#include "tests/unit/alloc/kernel_test_trees.h"

namespace cused::host {
namespace {

namespace fs = std::filesystem;

using kernel_test::make_temp_dir;

// The environment of a machine without a compiler: PATH is an empty folder.
class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tree = kernel_test::fetched_kernel_tree("7.2");
    if (!tree) GTEST_SKIP() << "no kernel trees fetched (tools/bootstrap fetches .deps/kernel/7.2)";
    tree_ = *tree;
    cache_ = make_temp_dir("cused-kernel-cache-");
    no_programs_ = make_temp_dir("cused-no-compiler-");
    setenv("CUSED_KERNEL_CACHE", cache_.c_str(), 1);
    const char* path = std::getenv("PATH");
    path_ = path ? path : "";
    unsetenv("CC");
    enable_kernel_designs();
  }
  void TearDown() override {
    setenv("PATH", path_.c_str(), 1);
    unsetenv("CC");
    std::error_code ec;
    if (!cache_.empty()) fs::remove_all(cache_, ec);
    if (!no_programs_.empty()) fs::remove_all(no_programs_, ec);
  }
  void lose_the_compiler() { setenv("PATH", no_programs_.c_str(), 1); }

  std::optional<KernelBuild> build(const std::string& name, std::string& error) {
    const KernelDesignPaths paths = kernel_design_paths();
    auto source = kernel_source_of(name, paths, error);
    return source ? build_kernel_design_of(*source, paths, error) : std::nullopt;
  }
  // The message a daemon's --variant (or binderctl set) gets for alloc_lock=NAME.
  static std::string variant_error(const std::string& name) {
    auto parsed = core::parse_device_variant("alloc_lock=" + name);
    if (!std::holds_alternative<core::VariantSpecError>(parsed)) return "(accepted)";
    return std::get<core::VariantSpecError>(parsed).message;
  }

  fs::path tree_, cache_, no_programs_;
  std::string path_;
};

// What `cused kernel-build` left in the cache is found and loaded without running anything: the
// daemon's own resolver serves the design with no compiler in PATH.
TEST_F(KernelCacheTest, ACacheHitNeedsNoCompiler) {
  std::string error;
  auto built = build("kernel:7.2", error);
  ASSERT_TRUE(built) << error;
  lose_the_compiler();
  auto again = build("kernel:7.2", error);
  ASSERT_TRUE(again) << error;
  EXPECT_TRUE(again->cached);
  EXPECT_EQ(again->object, built->object);
  auto design = core::alloc::parse_lock_variant("kernel:7.2");
  ASSERT_TRUE(design) << core::alloc::last_resolve_error();
  const core::alloc::KernelObject* object = core::alloc::kernel_object_of(*design);
  ASSERT_NE(object, nullptr);
  EXPECT_EQ(object->path, built->object.string());
  EXPECT_EQ(std::string(object->abi->kernel_version), "7.2.8");
}

// A miss without the compiler: the variant error names the design, the tree and the compiler
// cused looked for, says that the object is not in the cache and what to do; no scratch
// folder is left behind.
TEST_F(KernelCacheTest, AMissWithoutACompilerNamesTheCompilerAndTheDesign) {
  lose_the_compiler();
  // By path: a name no other test of this process has registered.
  const std::string name = "kernel:" + tree_.string();
  const std::string message = variant_error(name);
  // cc, or the build's own compiler in a sanitized cused (kernel_design_paths).
  const std::string cc = kernel_design_paths().cc;
  const std::string compiler = cc.substr(0, cc.find(' '));
  EXPECT_TRUE(message.starts_with("bad alloc_lock=" + name + ": building " + tree_.string() +
                                  "'s binder_alloc.c needs a C compiler, and there is no '" +
                                  compiler + "' here"))
      << message;
  EXPECT_NE(message.find("binder_alloc-7.2.8-"), std::string::npos) << message;
  EXPECT_NE(message.find("is not in the cache " + cache_.string()), std::string::npos) << message;
  EXPECT_NE(message.find("cused kernel-build"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_empty(cache_));
}

// $CC names the compiler looked for (and is part of the object's hash, so a cache built with
// another is a miss).
TEST_F(KernelCacheTest, AMissNamesTheCompilerOfCC) {
  setenv("CC", "/no/such/x86_64-linux-gnu-gcc -O2", 1);
  if (kernel_design_paths().cc != std::getenv("CC"))
    GTEST_SKIP() << "a sanitized cused builds the file with its own compiler, "
                 << kernel_design_paths().cc << ", whatever $CC says";
  std::string error;
  EXPECT_FALSE(build("kernel:7.2", error));
  EXPECT_NE(error.find("there is no '/no/such/x86_64-linux-gnu-gcc' here"), std::string::npos)
      << error;
  EXPECT_TRUE(fs::is_empty(cache_));
}

}  // namespace
}  // namespace cused::host
