// SPDX-License-Identifier: GPL-2.0-only
// The kernel shim's debug checks catch what they are for (docs/kernel-designs.md, "The kernel's
// debug checks"): negative controls in kernel-style C (kernel_check_controls.c) run on cused's
// runtime, and each must be reported; the same calls done right must not be.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "core/alloc/kernel/kernel_runtime.h"

extern "C" {
void control_init(const cused_krt* rt);
void control_mutex_under_spinlock();
void control_mutex_alone();
void control_zap_under_spinlock();
void control_warn();
long control_pages_kept();
void control_a_then_b();
void control_b_then_a();
void control_quiet_inversion();
void control_trylock_against_the_order();
void control_one_class_both_orders();
int control_call_that_bugs();
int control_locks_free();
extern int control_line_of_sleep;
extern int control_line_of_warn;
extern int control_line_of_a_then_b, control_line_of_b_then_a, control_line_of_bug;
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

// Lockdep's rule (cused/kernel_shim/lockdep.c): the second order of two lock classes is reported
// once, naming both locks and the sites of both orders.
TEST_F(KernelChecksTest, LockOrderInversionIsReportedOnceWithBothLocksAndSites) {
  set_kernel_lockdep(true);
  const auto before = kernel_report_counts();
  control_a_then_b();
  EXPECT_EQ(kernel_report_counts().lock_order, before.lock_order);
  control_b_then_a();
  const auto after = kernel_report_counts();
  set_kernel_lockdep(false);
  EXPECT_EQ(after.lock_order, before.lock_order + 1);
  const std::string& text = after.last;
  EXPECT_NE(text.find("possible circular locking dependency"), std::string::npos) << text;
  // The order being taken: &order_a at b_then_a's line under &order_b; the order seen before:
  // &order_b at a_then_b's line under &order_a.
  EXPECT_NE(text.find("&order_a taken at "), std::string::npos) << text;
  EXPECT_NE(text.find("kernel_check_controls.c:" + std::to_string(control_line_of_b_then_a) +
                      " while holding &order_b"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("&order_a -> &order_b, &order_b taken at "), std::string::npos) << text;
  EXPECT_NE(text.find("kernel_check_controls.c:" + std::to_string(control_line_of_a_then_b) +
                      " while holding &order_a"),
            std::string::npos)
      << text;
  set_kernel_lockdep(true);
  control_b_then_a();
  control_a_then_b();
  set_kernel_lockdep(false);
  EXPECT_EQ(kernel_report_counts().lock_order, after.lock_order) << "reported once per pair";
}

TEST_F(KernelChecksTest, LockOrderIsNotCheckedWhenLockdepIsOff) {
  const auto before = kernel_report_counts();
  control_quiet_inversion();
  EXPECT_EQ(kernel_report_counts().lock_order, before.lock_order);
}

TEST_F(KernelChecksTest, ATrylockAgainstTheOrderIsNotAnInversion) {
  set_kernel_lockdep(true);
  const auto before = kernel_report_counts();
  control_trylock_against_the_order();
  set_kernel_lockdep(false);
  EXPECT_EQ(kernel_report_counts().lock_order, before.lock_order);
}

// Lockdep's classes are init sites: two instances of one class are one node (their nesting is
// lockdep's "recursive locking" report, which the shim does not make).
TEST_F(KernelChecksTest, TwoLocksOfOneClassAreNotAnInversion) {
  set_kernel_lockdep(true);
  const auto before = kernel_report_counts();
  control_one_class_both_orders();
  set_kernel_lockdep(false);
  EXPECT_EQ(kernel_report_counts().lock_order, before.lock_order);
}

// BUG_ON is the kernel's oops: the call is abandoned and the caller fails it; the process goes
// on with the locks the call took released.
TEST_F(KernelChecksTest, BugOnAbandonsTheCallReleasesItsLocksAndTheProcessGoesOn) {
  const auto before = kernel_report_counts();
  EXPECT_EQ(control_call_that_bugs(), -ESRCH);
  const auto after = kernel_report_counts();
  EXPECT_EQ(after.warn, before.warn + 1);
  EXPECT_NE(after.last.find("kernel BUG at "), std::string::npos) << after.last;
  EXPECT_NE(after.last.find("kernel_check_controls.c:" + std::to_string(control_line_of_bug)),
            std::string::npos)
      << after.last;
  EXPECT_TRUE(control_locks_free());
  EXPECT_EQ(control_call_that_bugs(), -ESRCH) << "and again: nothing stayed held";
}

}  // namespace
}  // namespace cused::core::alloc
