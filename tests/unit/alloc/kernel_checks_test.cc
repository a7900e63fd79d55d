// SPDX-License-Identifier: GPL-2.0-only
// The kernel shim's debug checks catch what they are for (docs/kernel-designs.md, "The kernel's
// debug checks"): negative controls in kernel-style C (kernel_check_controls.c) run on cused's
// runtime, and each must be reported; the same calls done right must not be.
#include <gtest/gtest.h>

#include <string>

#include "core/alloc/kernel/kernel_runtime.h"

extern "C" {
void control_init(const cused_krt* rt);
void control_mutex_under_spinlock();
void control_mutex_alone();
void control_zap_under_spinlock();
void control_warn();
long control_pages_kept();
extern int control_line_of_sleep;
extern int control_line_of_warn;
}

namespace cused::core::alloc {
namespace {

class KernelChecksTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { control_init(&kernel_runtime()); }
};

TEST_F(KernelChecksTest, SleepingCallUnderASpinlockIsReportedWithFileLineAndLock) {
  const auto before = kernel_report_counts();
  control_mutex_under_spinlock();
  const auto after = kernel_report_counts();
  EXPECT_EQ(after.atomic_sleep, before.atomic_sleep + 1);
  EXPECT_NE(after.last.find("kernel_check_controls.c:" + std::to_string(control_line_of_sleep)),
            std::string::npos)
      << after.last;
  EXPECT_NE(after.last.find("mutex_lock under spinlock &control_lock"), std::string::npos)
      << after.last;
}

TEST_F(KernelChecksTest, SleepingCallWithoutASpinlockIsNotReported) {
  const auto before = kernel_report_counts();
  control_mutex_alone();
  EXPECT_EQ(kernel_report_counts().atomic_sleep, before.atomic_sleep);
}

TEST_F(KernelChecksTest, ZapUnderASpinlockIsReported) {
  const auto before = kernel_report_counts();
  control_zap_under_spinlock();
  const auto after = kernel_report_counts();
  EXPECT_EQ(after.atomic_sleep, before.atomic_sleep + 1);
  EXPECT_NE(after.last.find("zap under spinlock &control_lock"), std::string::npos) << after.last;
}

TEST_F(KernelChecksTest, WarnOnIsReportedWithFileAndLine) {
  const auto before = kernel_report_counts();
  control_warn();
  const auto after = kernel_report_counts();
  EXPECT_EQ(after.warn, before.warn + 1);
  EXPECT_NE(after.last.find("kernel_check_controls.c:" + std::to_string(control_line_of_warn)),
            std::string::npos)
      << after.last;
}

TEST_F(KernelChecksTest, PagesATaskKeepsAreCountedForTheLeakCheck) {
  EXPECT_EQ(control_pages_kept(), 1);
}

}  // namespace
}  // namespace cused::core::alloc
