// binder-ab's schedule: warm-up runs (discarded), then A B A B ... until the run count or the
// time budget is reached. Interleaving puts both variants under the same machine state, run by
// run; the pairs feed the paired bootstrap (statistics.h).
#pragma once

#include <chrono>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "tools/ab/workload.h"

namespace cused::tools::ab {

struct Schedule {
  int pairs = 0;                             // measured A B pairs; 0 = as many as fit the budget
  std::chrono::duration<double> budget{60};  // whole experiment, warm-up included
  int warmup_pairs = 1;
  int min_pairs = 3;                             // a budget too small for this many still runs them
  std::chrono::duration<double> run_limit{120};  // one run; beyond it the workload is killed
};

struct Measurements {
  std::vector<double> a, b;  // a[i] and b[i] ran next to each other
  int warmup_pairs = 0;
  std::chrono::duration<double> elapsed{};
};

// Runs the experiment. `progress`, if not null, gets a line per pair. Throws std::runtime_error
// when a run fails or prints no metric (with the tail of its output): a broken workload is an
// error, never a data point.
Measurements measure(const Variant& a, const Variant& b, const std::vector<std::string>& command,
                     const std::regex& metric, const Schedule& schedule, std::FILE* progress);

}  // namespace cused::tools::ab
