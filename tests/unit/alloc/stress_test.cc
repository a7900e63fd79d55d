// SPDX-License-Identifier: GPL-2.0-only
// Stress (docs/design.md section 7; the workload is cused/host/allocation_stress.h, which `cused
// check-design` runs too): threads allocate buffers, fill them with a pattern derived
// from a per-buffer seed, keep a few alive, verify and free them, while the shrinker reclaims in
// stress mode. A page punched out from under a live buffer shows up as a mismatch (the bytes read
// back as zero). Every registered design runs; those not racy on purpose must lose nothing.
//
//   CUSED_STRESS_OPS   operations per thread (default 50000: a few seconds; millions in total
//                      for the long mode, e.g. CUSED_STRESS_OPS=1000000)
//   CUSED_STRESS_SPIN=1  also run the designs racy on purpose (spin) and print what they lost (no
//                      assertion: how often a race window is hit depends on the machine);
//                      without it they are skipped
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "cused/host/allocation_stress.h"
#include "tests/unit/alloc/fixture.h"

namespace cused::core::alloc::testing {
namespace {

long env_long(const char* name, long fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::strtol(text, nullptr, 10) : fallback;
}

class StressTest : public ::testing::TestWithParam<Variant> {};

TEST_P(StressTest, S11_10_NoBufferLosesDataWhileTheShrinkerReclaims) {
  if (racy_on_purpose(GetParam()) && env_long("CUSED_STRESS_SPIN", 0) != 1)
    GTEST_SKIP() << "racy on purpose: CUSED_STRESS_SPIN=1 runs it";
  host::AllocationStressOptions options;
  options.ops_per_thread = env_long("CUSED_STRESS_OPS", 50000);
  host::AllocationStressOutcome outcome = host::run_allocation_stress(GetParam(), options);
  std::printf(
      "%s: %ld ops, %ld lost, %ld ENOSPC; shrinker %llu passes, %llu pages reclaimed, "
      "%llu skipped\n",
      to_string(GetParam()).c_str(), outcome.ops, outcome.lost, outcome.no_space,
      static_cast<unsigned long long>(outcome.shrinker.passes),
      static_cast<unsigned long long>(outcome.shrinker.pages),
      static_cast<unsigned long long>(outcome.shrinker.skipped));
  EXPECT_EQ(outcome.ops, options.ops_per_thread * options.threads);
  EXPECT_EQ(outcome.unexpected_errors, 0);
  for (const AllocatorStats& stats : outcome.end_stats) {
    EXPECT_EQ(stats.allocated_buffers, 0u);
    EXPECT_EQ(stats.free_buffers, 1u);  // everything merged back
    EXPECT_EQ(stats.free_async_space, options.space / 2);
  }
  // Without reclaim during the run the test would prove nothing.
  EXPECT_GT(outcome.shrinker.pages, 0u);
  if (!racy_on_purpose(GetParam())) {
    EXPECT_EQ(outcome.lost, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, StressTest, ::testing::ValuesIn(all_variants()),
                         [](const auto& info) { return name_of(info.param); });

}  // namespace
}  // namespace cused::core::alloc::testing
