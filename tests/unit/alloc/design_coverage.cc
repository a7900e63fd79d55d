// SPDX-License-Identifier: GPL-2.0-only
// Linked into every allocator suite that runs per design (meson.build): fails when a registered
// design (core/alloc/designs/registry.cc) is missing from one of the binary's parameterized suites
// over allocator variants, e.g. a suite that went back to a hand-kept list. gtest prints each
// parameter as its variant text (fixture.h's PrintTo), which names the design.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>

#include "core/alloc/designs/registry.h"

namespace cused::core::alloc::testing {
namespace {

TEST(DesignCoverage, EverySuiteOverDesignsRunsEveryRegisteredDesign) {
  constexpr std::string_view kKey = "alloc_lock=";
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  int suites_over_designs = 0;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    std::set<std::string, std::less<>> seen;
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const char* param = suite.GetTestInfo(j)->value_param();
      if (!param || !std::string_view(param).starts_with(kKey)) continue;
      std::string_view design = std::string_view(param).substr(kKey.size());
      seen.emplace(design.substr(0, design.find(',')));
    }
    if (seen.empty()) continue;
    ++suites_over_designs;
    for (const Design& design : designs())
      EXPECT_TRUE(seen.contains(design.name))
          << suite.name() << " does not run the registered design " << design.name;
  }
  EXPECT_GT(suites_over_designs, 0) << "no suite over allocator designs in this binary";
}

}  // namespace
}  // namespace cused::core::alloc::testing
