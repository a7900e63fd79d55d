// SPDX-License-Identifier: GPL-2.0-only
// The scratch directory each binder-ab unit test uses.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
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

}  // namespace cused::tools::ab::test_dirs
