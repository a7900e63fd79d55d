// SPDX-License-Identifier: GPL-2.0-only
// The host LSM's label of a sender (cused/host/proc_attr_label.h), what the daemon's devices
// deliver with BR_TRANSACTION_SEC_CTX (S4.9): /proc/<pid>/attr/current, or the fallback.
#include "cused/host/proc_attr_label.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cused/host/read_small_file.h"

namespace cused::host {
namespace {

// The label is attr/current's text without its newline, NUL-terminated (here from a stand-in
// for /proc); core asks once per sender proc (tests/unit/core/security_test.cc).
TEST(SecurityLabel, ProcAttrIsAttrCurrentWithoutItsNewline_S4_9) {
  char pattern[] = "/tmp/cused-attr-XXXXXX";
  const std::string root = mkdtemp(pattern);
  std::filesystem::create_directories(root + "/42/attr");
  std::ofstream(root + "/42/attr/current") << "u:r:host_app:s0\n";
  std::string label;
  ProcAttrLabel source("fallback", root);
  ASSERT_EQ(source.label(42, label), 0);
  EXPECT_EQ(label, std::string("u:r:host_app:s0") + '\0');
  std::filesystem::remove_all(root);
}

// The label source reads /proc/<pid>/attr/current when there is one and falls back otherwise.
TEST(SecurityLabel, ProcAttrFallsBackWithoutLsm_S4_9) {
  std::string label;
  ProcAttrLabel source("fallback", "/nonexistent");
  ASSERT_EQ(source.label(1, label), 0);
  EXPECT_EQ(label, std::string("fallback") + '\0');
}

// The same against this machine's real /proc: where no LSM provides attr/current its read fails
// (EINVAL), and that must give the fallback, not an exception out of the daemon's request
// handler (the crash of Android's servicemanager, which asks for sender contexts).
TEST(SecurityLabel, RealProcGivesTheHostLabelOrTheFallback_S4_9) {
  std::string host;
  bool readable = read_small_file("/proc/self/attr/current", host) == 0 && !host.empty();
  std::string label;
  ProcAttrLabel source("fallback");
  ASSERT_EQ(source.label(getpid(), label), 0);
  ASSERT_FALSE(label.empty());
  EXPECT_EQ(label.back(), '\0');
  if (!readable) {
    EXPECT_EQ(label, std::string("fallback") + '\0');
  }
}

}  // namespace
}  // namespace cused::host
