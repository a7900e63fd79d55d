// SPDX-License-Identifier: GPL-2.0-only
// The shrinker's policy (docs/design.md section 4): what a pass reclaims (the whole global
// PageLru), when the loop must run one (a "shrink now" request, stress mode, a pressure event) and
// the stats binderctl shows. What runs the loop, a thread sleeping in poll(2) on the pressure
// sources and an eventfd, is the host's (cused/host/shrinker_thread.h); core's tests run passes
// themselves.
#pragma once

#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "core/alloc/page_lru.h"
#include "core/sync/mutex.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

struct ShrinkerStats {
  std::uint64_t passes = 0;           // reclaim walks over the LRU
  std::uint64_t pages = 0;            // pages punched out of memfds
  std::uint64_t bytes = 0;            // memory returned
  std::uint64_t skipped = 0;          // pages passed over because their allocator was busy
  std::uint64_t pressure_events = 0;  // PSI / cgroup / extra source events acted on
  std::uint64_t requests = 0;         // shrink_now() calls served
  bool stress = false;
  std::vector<std::string> sources;      // the pressure sources being watched
  std::vector<std::string> unavailable;  // the ones that could not be set up, and why
};

// What the loop does next, taken at the top of each round.
struct ShrinkerRound {
  bool stop = false;
  bool stress = false;  // reclaim every round, without waiting for pressure
  // "Shrink now" requests to serve with one pass before anything else.
  std::vector<std::promise<ReclaimResult>> requests;
};

class Shrinker {
 public:
  // `sources`: the names of the pressure sources the loop watches; `unavailable`: the ones the
  // host could not set up, and why. Both only for the stats.
  explicit Shrinker(PageLru& lru, bool stress = false, std::vector<std::string> sources = {},
                    std::vector<std::string> unavailable = {});
  // Answers the requests no round took (ReclaimResult{}): nobody waits forever on them.
  ~Shrinker();
  Shrinker(const Shrinker&) = delete;
  Shrinker& operator=(const Shrinker&) = delete;

  // The callers' side; the caller then wakes the loop.
  // A "shrink now": answered by the pass of the round that takes it.
  std::future<ReclaimResult> request() CUSED_EXCLUDES(mutex_);
  // Stress mode: reclaim continuously (the loop reclaims every round).
  void set_stress(bool on) CUSED_EXCLUDES(mutex_);
  // The loop ends at its next round.
  void stop() CUSED_EXCLUDES(mutex_);
  ShrinkerStats stats() const CUSED_EXCLUDES(mutex_);

  // The loop's side.
  ShrinkerRound take_round() CUSED_EXCLUDES(mutex_);
  // One pass over the LRU, counted; `pressure`: a pressure event asked for it. Answers `requests`
  // with what it returned.
  ReclaimResult reclaim(bool pressure, std::vector<std::promise<ReclaimResult>> requests = {})
      CUSED_EXCLUDES(mutex_);

 private:
  PageLru& lru_;
  mutable sync::Mutex mutex_;
  ShrinkerStats stats_ CUSED_GUARDED_BY(mutex_);
  std::vector<std::promise<ReclaimResult>> pending_ CUSED_GUARDED_BY(mutex_);
  bool stop_ CUSED_GUARDED_BY(mutex_) = false;
};

}  // namespace cused::core::alloc
