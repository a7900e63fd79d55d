// SPDX-License-Identifier: GPL-2.0-only
// Replays the seed corpus (tests/fuzz/corpus, made by make-fuzz-seeds) in every build, the g++
// one included: each seed is a conformance scenario or an S11 regression input, and core's
// invariants must hold on all of them (issue 8).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/fuzz/script.h"

namespace cused::fuzz {
namespace {

std::vector<std::filesystem::path> corpus() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(CUSED_FUZZ_CORPUS))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint8_t> slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every S11 historical bug has a regression input (issue 8); the runner must hold on each.
TEST(FuzzCorpus, EverySeedKeepsCoreInvariants_S11) {
  auto files = corpus();
  int s11 = 0;
  std::size_t delivered = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    Outcome outcome = run_script(slurp(path));
    for (const auto& line : outcome.violations) ADD_FAILURE() << line;
    delivered += outcome.delivered;
    if (path.filename().string().starts_with("s11_")) s11++;
  }
  EXPECT_GE(s11, 15) << "one regression seed per S11 item";
  // The scenarios must reach delivery, not only the error paths.
  EXPECT_GT(delivered, files.size());
}

// Inputs that are not scripts at all are scripts too (the reader sees zeros past the end): they
// must run to the end without breaking anything.
TEST(FuzzCorpus, EmptyAndGarbageInputsRun) {
  EXPECT_TRUE(run_script({}).violations.empty());
  std::vector<std::uint8_t> garbage(4096);
  for (std::size_t i = 0; i < garbage.size(); i++)
    garbage[i] = static_cast<std::uint8_t>(i * 131 + 7);
  Outcome outcome = run_script(garbage);
  for (const auto& line : outcome.violations) ADD_FAILURE() << line;
  EXPECT_GT(outcome.steps, 10u);
}

}  // namespace
}  // namespace cused::fuzz
