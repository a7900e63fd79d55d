// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/allocation_stress.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <span>
#include <thread>

#include "core/alloc/designs/registry.h"
#include "core/alloc/page_lru.h"
#include "cused/host/memfd_buffer_file.h"
#include "cused/host/shrinker_thread.h"

namespace cused::host {
namespace {

using core::alloc::Allocator;
using core::alloc::Buffer;

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
  std::atomic<long> ops{0}, lost{0}, no_space{0}, unexpected{0};
};

// One proc: its memfd and its allocator over it.
struct Proc {
  Proc(core::alloc::PageLru& lru, core::alloc::Variant variant, std::size_t space)
      : file(MemfdBufferFile::create("cused-allocation-stress", space)),
        alloc(core::alloc::make_allocator(*file, variant, lru, {})) {
    if (alloc->map(space) != 0) throw std::runtime_error("allocation stress: map failed");
  }
  ~Proc() { alloc.reset(); }  // the allocator goes before its file

  std::unique_ptr<core::BufferFile> file;
  std::unique_ptr<Allocator> alloc;
};

class Worker {
 public:
  Worker(Allocator& alloc, int id, const AllocationStressOptions& options, Totals& totals)
      : alloc_(alloc),
        id_(id),
        options_(options),
        totals_(totals),
        random_(static_cast<std::uint64_t>(id) * 7919 + 1) {}

  void run(const std::atomic<bool>& stop) {
    long op = 0;
    for (; options_.duration.count() > 0 ? !stop.load(std::memory_order_relaxed)
                                         : op < options_.ops_per_thread;
         ++op)
      step();
    while (!live_.empty()) retire();
    totals_.ops += op;
  }

 private:
  void step() {
    // Mostly small buffers (they share pages with neighbours), one in eight up to 64 KiB.
    std::size_t size = random_() % 8 == 0 ? 4096 + random_() % (60 * 1024) : 8 + random_() % 4000;
    bool async = random_() % 4 == 0;
    core::alloc::NewBufferResult result = alloc_.new_buffer(size, 0, 0, async, id_);
    if (!result) {
      ++(result.error == -ENOSPC ? totals_.no_space : totals_.unexpected);
      if (!live_.empty()) retire();
      return;
    }
    std::uint64_t seed = random_();
    fill(alloc_.contents(*result.buffer), seed);
    live_.push_back({result.buffer, seed});
    if (live_.size() > options_.live) retire();
  }

  void retire() {
    Live oldest = live_.front();
    live_.pop_front();
    if (!verify(alloc_.contents(*oldest.buffer), oldest.seed)) ++totals_.lost;
    alloc_.free_buffer(*oldest.buffer);
  }

  Allocator& alloc_;
  int id_;
  const AllocationStressOptions& options_;
  Totals& totals_;
  std::mt19937_64 random_;
  std::deque<Live> live_;
};

}  // namespace

AllocationStressOutcome run_allocation_stress(core::alloc::Variant variant,
                                              const AllocationStressOptions& options) {
  core::alloc::PageLru lru;
  std::vector<std::unique_ptr<Proc>> procs;
  for (int i = 0; i < options.procs; ++i)
    procs.push_back(std::make_unique<Proc>(lru, variant, options.space));
  Totals totals;
  AllocationStressOutcome outcome;
  {
    // The daemon's shrinker thread, in stress mode: reclaim, sched_yield, again.
    ShrinkerOptions shrinker_options;
    shrinker_options.stress = true;
    ShrinkerThread shrinker(lru, std::move(shrinker_options));
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int id = 0; id < options.threads; ++id)
      threads.emplace_back([&, id] {
        Worker(*procs[id % options.procs]->alloc, id + 1, options, totals).run(stop);
      });
    if (options.duration.count() > 0) {
      std::this_thread::sleep_for(options.duration);
      stop = true;
    }
    for (auto& thread : threads) thread.join();
    outcome.shrinker = shrinker.stats();
  }
  for (auto& proc : procs) outcome.end_stats.push_back(proc->alloc->stats());
  outcome.ops = totals.ops;
  outcome.lost = totals.lost;
  outcome.no_space = totals.no_space;
  outcome.unexpected_errors = totals.unexpected;
  return outcome;
}

}  // namespace cused::host
