// SPDX-License-Identifier: GPL-2.0-only
// The published figures beside cused's B/A (binder-ab run --table published, tools/reproduce's
// table since issue 46, which its Python printed before): the side of 1 the interval lies on
// against the published direction, the blocks' own B/A with I², and a row per secondary metric.
#include <gtest/gtest.h>

#include <string>

#include "tools/ab/published_table.h"

namespace cused::tools::ab {
namespace {

nlohmann::json record(double low, double value, double high) {
  return {{"metric", "iterations per sec"},
          {"ratio", {{"low", low}, {"value", value}, {"high", high}}},
          {"verdict", {{"text", "some verdict"}}},
          {"blocks", nlohmann::json::array({{{"ratio", 1.234}}, {{"ratio", 0.9}}})},
          {"heterogeneity", 0.5}};
}

std::string row_for(Better direction, double low, double value, double high) {
  PublishedRow row{
      "alloc-lock", {"experiment", "B/A 1.3-3.1", direction}, record(low, value, high)};
  auto table = published_table({row});
  return table.substr(table.find("| alloc-lock"));
}

TEST(PublishedTable, SaysWhetherTheIntervalLiesOnThePublishedSide) {
  EXPECT_EQ(
      row_for(Better::higher, 1.1, 1.2, 1.3),
      "| alloc-lock | B/A 1.3-3.1 | iterations per sec | 1.200 [1.100, 1.300] | some verdict | "
      "yes (published B/A > 1) | 1.23 0.90 (0.50) |\n");
  EXPECT_NE(row_for(Better::higher, 0.7, 0.8, 0.9).find("| no, the opposite (published B/A > 1) |"),
            std::string::npos);
  EXPECT_NE(row_for(Better::lower, 0.7, 0.8, 0.9).find("| yes (published B/A < 1) |"),
            std::string::npos);
  EXPECT_NE(row_for(Better::lower, 0.9, 1.0, 1.1).find("| not resolved (the interval holds 1) |"),
            std::string::npos);
}

TEST(PublishedTable, OneStartAndSecondaryRows) {
  auto one = record(1.1, 1.2, 1.3);
  one["blocks"] = nlohmann::json::array();
  one["secondary"] = {{{"name", "P99 latency (ms)"},
                       {"ratio", {{"low", 0.5}, {"value", 0.6}, {"high", 0.7}}},
                       {"verdict", {{"text", "B 40 % lower"}}}}};
  auto table = published_table({{"alloc-lock", {"e", "r", Better::higher}, one}});
  EXPECT_NE(table.find("| one start |\n"), std::string::npos) << table;
  EXPECT_NE(
      table.find("| alloc-lock | | P99 latency (ms) | 0.600 [0.500, 0.700] | B 40 % lower | | |\n"),
      std::string::npos)
      << table;
}

}  // namespace
}  // namespace cused::tools::ab
