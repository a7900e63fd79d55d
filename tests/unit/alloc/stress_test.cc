// SPDX-License-Identifier: GPL-2.0-only
// Stress (docs/design.md section 7): threads allocate buffers, fill them with a pattern derived
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

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <thread>
#include <vector>

#include "cused/host/shrinker_thread.h"
#include "tests/unit/alloc/fixture.h"

namespace cused::core::alloc::testing {
namespace {

constexpr int kThreads = 4;
constexpr int kProcs = 2;
constexpr std::size_t kSpace = 1 << 20;
constexpr std::size_t kLive = 6;  // buffers each thread keeps alive

long env_long(const char* name, long fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::strtol(text, nullptr, 10) : fallback;
}

std::uint64_t pattern_word(std::uint64_t seed, std::size_t index) {
  std::uint64_t x = seed + index * 0x9e3779b97f4a7c15ull;
  x ^= x >> 31;
  return x * 0xbf58476d1ce4e5b9ull | 1;  // never zero: a punched page cannot match
}

void fill(std::span<std::byte> bytes, std::uint64_t seed) {
  for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word = pattern_word(seed, i / 8);
    std::memcpy(bytes.data() + i, &word, 8);
  }
}

bool verify(std::span<const std::byte> bytes, std::uint64_t seed) {
  for (std::size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    if (word != pattern_word(seed, i / 8)) return false;
  }
  return true;
}

struct Live {
  Buffer* buffer;
  std::uint64_t seed;
};

struct Totals {
  std::atomic<long> ops{0}, lost{0}, no_space{0};
};

void worker(Allocator& alloc, int id, long ops, Totals& totals) {
  std::mt19937_64 random(static_cast<std::uint64_t>(id) * 7919 + 1);
  std::deque<Live> live;
  auto retire = [&] {
    Live oldest = live.front();
    live.pop_front();
    if (!verify(alloc.contents(*oldest.buffer), oldest.seed)) ++totals.lost;
    alloc.free_buffer(*oldest.buffer);
  };
  for (long op = 0; op < ops; ++op) {
    // Mostly small buffers (they share pages with neighbours), one in eight up to 64 KiB.
    std::size_t size = random() % 8 == 0 ? 4096 + random() % (60 * 1024) : 8 + random() % 4000;
    bool async = random() % 4 == 0;
    NewBufferResult result = alloc.new_buffer(size, 0, 0, async, id);
    if (!result) {
      EXPECT_EQ(result.error, -ENOSPC);
      ++totals.no_space;
      if (!live.empty()) retire();
      continue;
    }
    std::uint64_t seed = random();
    fill(alloc.contents(*result.buffer), seed);
    live.push_back({result.buffer, seed});
    if (live.size() > kLive) retire();
  }
  while (!live.empty()) retire();
  totals.ops += ops;
}

struct StressOutcome {
  long ops = 0, lost = 0, no_space = 0;
  ShrinkerStats shrinker;
};

StressOutcome stress(Variant variant, long ops_per_thread) {
  PageLru lru;
  std::vector<std::unique_ptr<TestProc>> procs;
  for (int i = 0; i < kProcs; ++i)
    procs.push_back(std::make_unique<TestProc>(lru, variant, kSpace));
  Totals totals;
  StressOutcome outcome;
  {
    // The daemon's shrinker thread, in stress mode: reclaim, sched_yield, again.
    host::ShrinkerOptions options;
    options.stress = true;
    host::ShrinkerThread shrinker(lru, std::move(options));
    std::vector<std::thread> threads;
    for (int id = 0; id < kThreads; ++id)
      threads.emplace_back(worker, std::ref(*procs[id % kProcs]->alloc), id + 1, ops_per_thread,
                           std::ref(totals));
    for (auto& thread : threads) thread.join();
    outcome.shrinker = shrinker.stats();
  }
  for (auto& proc : procs) {
    AllocatorStats stats = proc->alloc->stats();
    EXPECT_EQ(stats.allocated_buffers, 0u);
    EXPECT_EQ(stats.free_buffers, 1u);  // everything merged back
    EXPECT_EQ(stats.free_async_space, kSpace / 2);
  }
  outcome.ops = totals.ops;
  outcome.lost = totals.lost;
  outcome.no_space = totals.no_space;
  return outcome;
}

class StressTest : public ::testing::TestWithParam<Variant> {};

TEST_P(StressTest, S11_10_NoBufferLosesDataWhileTheShrinkerReclaims) {
  if (racy_on_purpose(GetParam()) && env_long("CUSED_STRESS_SPIN", 0) != 1)
    GTEST_SKIP() << "racy on purpose: CUSED_STRESS_SPIN=1 runs it";
  const long ops = env_long("CUSED_STRESS_OPS", 50000);
  StressOutcome outcome = stress(GetParam(), ops);
  std::printf(
      "%s: %ld ops, %ld lost, %ld ENOSPC; shrinker %llu passes, %llu pages reclaimed, "
      "%llu skipped\n",
      to_string(GetParam()).c_str(), outcome.ops, outcome.lost, outcome.no_space,
      static_cast<unsigned long long>(outcome.shrinker.passes),
      static_cast<unsigned long long>(outcome.shrinker.pages),
      static_cast<unsigned long long>(outcome.shrinker.skipped));
  EXPECT_EQ(outcome.ops, ops * kThreads);
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
