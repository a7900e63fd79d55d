// SPDX-License-Identifier: GPL-2.0-only
// The table of an experiment file's published figures beside cused's B/A (binder-ab run, and so
// tools/reproduce): per experiment, the published result, the metric, B/A with its interval,
// the verdict, whether B/A lies on the published side of 1, and the blocks' own B/A with their
// I²; a row per secondary metric (latency percentiles) below.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/ab/experiment_file.h"

namespace cused::tools::ab {

struct PublishedRow {
  std::string name;
  ExperimentPublished published;
  nlohmann::json record;  // binder-ab's JSON record of the comparison (report.h's to_json)
};

std::string published_table(const std::vector<PublishedRow>& rows);

}  // namespace cused::tools::ab
