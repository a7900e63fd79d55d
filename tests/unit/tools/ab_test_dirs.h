// SPDX-License-Identifier: GPL-2.0-only
// Directories the binder-ab unit tests use: a scratch directory per test, and the ready-file
// directories binder-ab makes (binder-ab-XXXXXX in the temporary directory).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>

namespace cused::tools::ab::test_dirs {

// An empty directory named for this process and the running test.
inline std::filesystem::path scratch_dir(const std::string& prefix) {
  auto dir = std::filesystem::temp_directory_path() /
             (prefix + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// binder-ab's ready-file directories there now (another, killed binder-ab's included).
inline std::set<std::filesystem::path> binder_ab_directories() {
  std::set<std::filesystem::path> found;
  for (auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    if (entry.path().filename().string().starts_with("binder-ab-")) found.insert(entry.path());
  return found;
}

}  // namespace cused::tools::ab::test_dirs
