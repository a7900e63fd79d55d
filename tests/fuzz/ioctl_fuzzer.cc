// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target (issue 8): one input is a script over several procs and threads
// (tests/fuzz/script.h). Any crash, sanitizer report, leak or broken core invariant fails.
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/script.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cused::fuzz::Outcome outcome = cused::fuzz::run_script({data, size});
  if (outcome.violations.empty()) return 0;
  std::fprintf(stderr, "core invariants broken after %zu steps:\n", outcome.steps);
  for (const auto& line : outcome.violations) std::fprintf(stderr, "  %s\n", line.c_str());
  std::abort();
}
