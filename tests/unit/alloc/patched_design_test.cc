// SPDX-License-Identifier: GPL-2.0-only
// alloc_lock=kernel:TREE+PATCH (cused/host/patched_kernel_tree.h, docs/kernel-designs.md, "Your
// patch as a design"): a tree with a patch is a design of its own beside the unpatched tree,
// its object cached under the patched sources' hash, built from a scratch copy that is gone
// afterwards; a patch that does not apply is a variant error in patch's words. And the scratch
// folders (cused/host/scratch_directory.h): one whose owner died is removed by the next owner.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

#include "core/alloc/designs/registry.h"
#include "core/alloc/kernel/kernel_design.h"
#include "core/device_variant.h"
#include "cused/host/kernel_design_loader.h"
#include "cused/host/scratch_directory.h"
#include "tests/unit/alloc/kernel_test_trees.h"

namespace cused::host {
namespace {

namespace fs = std::filesystem;

using kernel_test::cache_leftovers;
using kernel_test::make_temp_dir;

class PatchedDesignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernel_test::fetched_kernel_tree("7.2"))
      GTEST_SKIP() << "no kernel trees fetched (tools/bootstrap fetches .deps/kernel/7.2)";
    // A cache of its own: what this test builds and leaves is all that is in it.
    cache_ = make_temp_dir("cused-patched-cache-");
    setenv("CUSED_KERNEL_CACHE", cache_.c_str(), 1);
    enable_kernel_designs();
  }
  void TearDown() override {
    std::error_code ec;
    if (!cache_.empty()) fs::remove_all(cache_, ec);
  }

  static std::string patch(const std::string& name) {
    return (fs::path(std::getenv("CUSED_SOURCE_ROOT")) / "tests/kernel-designs/patches" / name)
        .string();
  }

  fs::path cache_;
};

TEST_F(PatchedDesignTest, APatchedTreeIsADesignBesideTheUnpatchedOneWithAnObjectOfItsOwn) {
  const std::string patched_name = "kernel:7.2+" + patch("7.2-spinlock-install-mutex.patch");
  auto plain = core::alloc::parse_lock_variant("kernel:7.2");
  auto patched = core::alloc::parse_lock_variant(patched_name);
  ASSERT_TRUE(plain) << core::alloc::last_resolve_error();
  ASSERT_TRUE(patched) << core::alloc::last_resolve_error();
  EXPECT_NE(*plain, *patched);
  EXPECT_EQ(core::alloc::to_string(*patched), patched_name);
  const core::alloc::KernelObject* plain_object = core::alloc::kernel_object_of(*plain);
  const core::alloc::KernelObject* patched_object = core::alloc::kernel_object_of(*patched);
  ASSERT_NE(plain_object, nullptr);
  ASSERT_NE(patched_object, nullptr);
  EXPECT_NE(plain_object->path, patched_object->path);
  EXPECT_EQ(std::string(patched_object->abi->kernel_version), "7.2.8");
  EXPECT_TRUE(patched_object->tree.ends_with("+7.2-spinlock-install-mutex.patch"))
      << patched_object->tree;
  EXPECT_NE(core::alloc::design_of(*patched).description.find("7.2-spinlock-install-mutex.patch"),
            std::string::npos);
  EXPECT_EQ(cache_leftovers(cache_), std::vector<std::string>{}) << "the scratch copy is removed";
}

// The hash covers the patched sources: the same patch finds its object, another patch (or none)
// makes another.
TEST_F(PatchedDesignTest, TheObjectIsCachedUnderThePatchedSourcesHash) {
  const KernelDesignPaths paths = kernel_design_paths();
  std::string error;
  auto object_of = [&](const std::string& name) {
    auto source = kernel_source_of(name, paths, error);
    EXPECT_TRUE(source) << error;
    auto build = source ? build_kernel_design_of(*source, paths, error) : std::nullopt;
    EXPECT_TRUE(build) << error;
    return build.value_or(KernelBuild{});
  };
  const std::string with_mutex = "kernel:7.2+" + patch("7.2-spinlock-install-mutex.patch");
  const KernelBuild first = object_of(with_mutex);
  EXPECT_FALSE(first.cached);
  const KernelBuild again = object_of(with_mutex);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.object, first.object);
  const KernelBuild other =
      object_of("kernel:7.2+" + patch("7.2-negative-zap-under-spinlock.patch"));
  const KernelBuild plain = object_of("kernel:7.2");
  EXPECT_NE(other.object, first.object);
  EXPECT_NE(plain.object, first.object);
  EXPECT_NE(plain.object, other.object);
  EXPECT_EQ(cache_leftovers(cache_), std::vector<std::string>{});
}

// A patch that does not apply is refused as any bad variant is: the parser's error, with patch's
// own words (the file, the hunk that failed); nothing is left in the cache, and the tree still
// serves unpatched.
TEST_F(PatchedDesignTest, APatchThatDoesNotApplyIsAVariantErrorInPatchsWords) {
  const fs::path bad = patch("7.2-does-not-apply.patch");
  auto parsed = core::parse_device_variant("alloc_lock=kernel:7.2+" + bad.string());
  ASSERT_TRUE(std::holds_alternative<core::VariantSpecError>(parsed));
  const std::string& message = std::get<core::VariantSpecError>(parsed).message;
  EXPECT_TRUE(message.starts_with("bad alloc_lock=kernel:7.2+" + bad.string() + ": ")) << message;
  EXPECT_NE(message.find("does not apply to"), std::string::npos) << message;
  EXPECT_NE(message.find("patching file drivers/android/binder_alloc.c"), std::string::npos)
      << message;
  EXPECT_NE(message.find("Hunk #1 FAILED at 120."), std::string::npos) << message;
  EXPECT_EQ(cache_leftovers(cache_), std::vector<std::string>{});
  EXPECT_TRUE(core::alloc::parse_lock_variant("kernel:7.2"));
}

TEST_F(PatchedDesignTest, AMissingPatchFileIsNamed) {
  auto parsed = core::parse_device_variant("alloc_lock=kernel:7.2+no/such.patch");
  ASSERT_TRUE(std::holds_alternative<core::VariantSpecError>(parsed));
  EXPECT_NE(std::get<core::VariantSpecError>(parsed).message.find("no patch file 'no/such.patch'"),
            std::string::npos)
      << std::get<core::VariantSpecError>(parsed).message;
}

// A killed check-design or daemon leaves its scratch folder; the next one removes it, and only
// it: a folder whose owner holds its lock, or one made a moment ago (its owner may not have
// locked it yet), stays, and so does another prefix's.
TEST(ScratchDirectory, AFolderWhoseOwnerDiedIsRemovedByTheNextOwner) {
  const fs::path parent = make_temp_dir("cused-scratch-");
  const auto old = fs::file_time_type::clock::now() - std::chrono::minutes(5);
  auto make = [&](const std::string& name, bool aged) {
    fs::create_directories(parent / name / "drivers");
    std::ofstream(parent / name / "drivers" / "file") << "x";
    if (aged) fs::last_write_time(parent / name, old);
  };
  make("patched-dead01", true);
  make("patched-alive1", true);
  make("patched-young1", false);
  make("build-dead01", true);
  const int held = open((parent / "patched-alive1").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX), 0);
  fs::path made;
  {
    ScratchDirectory scratch(parent, "patched");
    made = scratch.path();
    EXPECT_TRUE(fs::is_directory(made));
    EXPECT_TRUE(made.filename().string().starts_with("patched-"));
    EXPECT_FALSE(fs::exists(parent / "patched-dead01"));
    EXPECT_TRUE(fs::exists(parent / "patched-alive1"));
    EXPECT_TRUE(fs::exists(parent / "patched-young1"));
    EXPECT_TRUE(fs::exists(parent / "build-dead01"));
    // Another owner's sweep leaves a live folder alone, however old.
    fs::last_write_time(made, old);
    EXPECT_EQ(ScratchDirectory::remove_stale(parent, "patched"), 0);
    EXPECT_TRUE(fs::exists(made));
  }
  EXPECT_FALSE(fs::exists(made)) << "removed by its owner at the end";
  close(held);
  EXPECT_EQ(ScratchDirectory::remove_stale(parent, "patched"), 1) << "the lock's owner is gone";
  EXPECT_EQ(ScratchDirectory::remove_stale(parent, "build"), 1);
  fs::remove_all(parent);
}

}  // namespace
}  // namespace cused::host
