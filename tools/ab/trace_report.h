// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --trace's outputs: the traced window's summary as text after the verdict table (one
// table of lock waits, one of holds, both variants' rows) and in the JSON record.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/ab/traced_run.h"

namespace cused::tools::ab {

// Which traced run is whose, then the waits' table and the holds' table (Markdown).
std::string trace_tables(const std::vector<TracedRun>& runs);

nlohmann::json to_json(const std::vector<TracedRun>& runs);
std::vector<TracedRun> traced_runs_from_json(const nlohmann::json& record);

// Every wait of a side's traced window by the threads of one class, whatever the lock (the
// plot's curves); the classes in the order of the summary.
std::vector<std::pair<std::string, std::vector<std::uint64_t>>> waits_by_class(
    const LockTraceSummary& summary);

}  // namespace cused::tools::ab
