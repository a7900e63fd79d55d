// SPDX-License-Identifier: GPL-2.0-only
// core/alloc: alloc+free throughput and latency per allocator variant, 1..4 threads on one proc,
// small (up to 4 KiB) and large (64 KiB) buffers, with the shrinker idle or reclaiming continuously
// (stress mode). Results and their reading: docs/performance.md, section "Allocator".
//
//   build/tests/bench/alloc-bench --benchmark_filter=... --benchmark_min_time=0.3
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/alloc/allocator.h"
#include "core/alloc/designs/registry.h"
#include "core/buffer_file.h"
#include "cused/host/memfd_buffer_file.h"
#include "cused/host/shrinker_thread.h"

namespace cused::core::alloc {
namespace {

struct Config {
  Variant variant;
  std::size_t size;
  bool shrinker_stress;
};

// One proc's allocator shared by all threads of a run, plus the LRU and the shrinker.
struct World {
  explicit World(const Config& config)
      : file(host::MemfdBufferFile::create("alloc-bench", kMaxBufferSpace)),
        alloc(make_allocator(*file, config.variant, lru)) {
    alloc->map(kMaxBufferSpace);
    if (config.shrinker_stress) {
      host::ShrinkerOptions options;
      options.stress = true;
      shrinker = std::make_unique<host::ShrinkerThread>(lru, std::move(options));
    }
  }
  ~World() {
    shrinker.reset();
    alloc.reset();
  }
  PageLru lru;
  std::unique_ptr<BufferFile> file;
  std::unique_ptr<Allocator> alloc;
  std::unique_ptr<host::ShrinkerThread> shrinker;
};

World* world = nullptr;  // set by thread 0 before the timed loop's start barrier

// One iteration frees a random one of the thread's kLive buffers and allocates a replacement
// (small: a random size up to 4 KiB; large: 64 KiB). Random order leaves holes at varying
// places, so freed pages wait on the LRU for a while, where a stress-mode shrinker can take them
// and a later allocation has to install them again.
constexpr std::size_t kLive = 8;

std::uint64_t next_random(std::uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

void alloc_free(benchmark::State& state, Config config) {
  if (state.thread_index() == 0) world = new World(config);
  std::vector<std::uint32_t> latencies;
  latencies.reserve(1 << 16);
  std::vector<Buffer*> live(kLive, nullptr);
  std::uint64_t random = 0x9e3779b97f4a7c15ull * (state.thread_index() + 1);
  std::size_t failures = 0, n = 0;
  for (auto _ : state) {
    Allocator& alloc = *world->alloc;
    std::uint64_t r = next_random(random);
    Buffer*& slot = live[r % kLive];
    std::size_t size = config.size >= 64 * 1024 ? config.size : 64 + (r >> 8) % (config.size - 64);
    // Time one in eight operations: a clock read costs about as much as a spin-lock round trip.
    bool timed = (n++ & 7) == 0 && latencies.size() < latencies.capacity();
    auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    if (slot) alloc.free_buffer(*slot);
    NewBufferResult result = alloc.new_buffer(size, 0, 0, false, 1);
    slot = result.buffer;
    failures += !result;
    if (timed)
      latencies.push_back(
          static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::steady_clock::now() - start)
                                         .count()));
  }
  // Buffers still live go with the allocator (thread 0 deletes the world below; the other threads
  // must not touch it after their loop).
  state.SetItemsProcessed(state.iterations());
  // Every run sets the same counters: Google Benchmark's CSV output takes its columns from the
  // first run and aborts on a counter that a later run adds.
  std::sort(latencies.begin(), latencies.end());
  auto at = [&](double q) {
    return latencies.empty() ? 0.0
                             : latencies[static_cast<std::size_t>(q * (latencies.size() - 1))];
  };
  state.counters["p50_ns"] = benchmark::Counter(at(0.50), benchmark::Counter::kAvgThreads);
  state.counters["p99_ns"] = benchmark::Counter(at(0.99), benchmark::Counter::kAvgThreads);
  state.counters["failed"] = benchmark::Counter(static_cast<double>(failures));
  if (state.thread_index() == 0) {
    // 0 without the stress shrinker: nothing reclaims during the run.
    state.counters["reclaimed_pages"] = benchmark::Counter(
        world->shrinker ? static_cast<double>(world->shrinker->stats().pages) : 0.0);
    delete world;
    world = nullptr;
  }
}

void register_all() {
  // Every registered design (core/alloc/designs/registry.cc), eager then lazy.
  std::vector<Variant> variants;
  for (PageTableVariant pages : {PageTableVariant::eager, PageTableVariant::lazy})
    for (const Design& design : designs()) variants.push_back({design.variant(), pages});
  for (bool stress : {false, true})
    for (std::size_t size : {std::size_t{4096}, std::size_t{64 * 1024}})
      for (const Variant& variant : variants) {
        std::string name = "alloc_free/" + std::string(to_string(variant.lock)) + "/" +
                           std::string(to_string(variant.pages)) + "/" +
                           std::to_string(size / 1024) + "KiB/" +
                           (stress ? "shrinker-stress" : "shrinker-idle");
        benchmark::RegisterBenchmark(name.c_str(), alloc_free, Config{variant, size, stress})
            ->ThreadRange(1, 4)
            ->UseRealTime();
      }
}

}  // namespace
}  // namespace cused::core::alloc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  cused::core::alloc::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
