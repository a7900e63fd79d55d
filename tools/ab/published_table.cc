// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/published_table.h"

#include <fmt/format.h>

namespace cused::tools::ab {

namespace {

// Whether cused's interval lies on the published side of 1, the other, or holds 1.
std::string reproduced(const ExperimentPublished& published, double low, double high) {
  bool higher = published.direction == Better::higher;
  std::string side = higher ? "> 1" : "< 1";
  bool yes = higher ? low > 1 : high < 1;
  bool opposite = higher ? high < 1 : low > 1;
  if (yes) return fmt::format("yes (published B/A {})", side);
  if (opposite) return fmt::format("no, the opposite (published B/A {})", side);
  return "not resolved (the interval holds 1)";
}

// The blocks' own B/A and their I²; one start's pairs only otherwise (its interval does not cover
// a rerun's: docs/ab.md).
std::string spread(const nlohmann::json& record) {
  const auto& blocks = record.value("blocks", nlohmann::json::array());
  if (blocks.empty()) return "one start";
  std::vector<std::string> ratios;
  for (const auto& block : blocks)
    ratios.push_back(fmt::format("{:.2f}", block.at("ratio").get<double>()));
  return fmt::format("{} ({:.2f})", fmt::join(ratios, " "),
                     record.at("heterogeneity").get<double>());
}

std::string interval(const nlohmann::json& ratio) {
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", ratio.at("value").get<double>(),
                     ratio.at("low").get<double>(), ratio.at("high").get<double>());
}

}  // namespace

std::string published_table(const std::vector<PublishedRow>& rows) {
  std::string text =
      "| scenario | published | cused: metric | B/A [95 % CI] | cused's verdict | B/A on the "
      "published side of 1 | blocks' B/A (I²) |\n|---|---|---|---|---|---|---|\n";
  for (const auto& row : rows) {
    const auto& record = row.record;
    const auto& ratio = record.at("ratio");
    text += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} |\n", row.name, row.published.result,
        record.at("metric").get<std::string>(), interval(ratio),
        record.at("verdict").at("text").get<std::string>(),
        reproduced(row.published, ratio.at("low").get<double>(), ratio.at("high").get<double>()),
        spread(record));
    for (const auto& extra : record.value("secondary", nlohmann::json::array()))
      text += fmt::format("| {} | | {} | {} | {} | | |\n", row.name,
                          extra.at("name").get<std::string>(), interval(extra.at("ratio")),
                          extra.at("verdict").at("text").get<std::string>());
  }
  return text;
}

}  // namespace cused::tools::ab
