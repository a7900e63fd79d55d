// The shrinker thread (docs/design.md section 4): reclaims the pages on the global PageLru when the
// system or the daemon's cgroup is short of memory, when asked to ("shrink now", binderctl), and
// continuously in stress mode, which exists to shake out reclaim races.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/alloc/page_lru.h"
#include "core/alloc/pressure.h"
#include "core/sync/mutex.h"
#include "core/sync/thread_annotations.h"

namespace cused::core::alloc {

struct ShrinkerOptions {
  bool stress = false;  // start in stress mode
  // What signals memory pressure; each event reclaims. The daemon's come from
  // cused/host/memory_pressure.h (PSI, the cgroup's memory.events); tests use a pipe. None: the
  // shrinker reclaims only when asked or in stress mode.
  std::vector<std::unique_ptr<PressureSource>> sources;
  std::vector<std::string> unavailable;  // the sources the host could not set up, and why
};

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

class Shrinker {
 public:
  explicit Shrinker(PageLru& lru, ShrinkerOptions options = {});
  // Stops and joins the thread.
  ~Shrinker();
  Shrinker(const Shrinker&) = delete;
  Shrinker& operator=(const Shrinker&) = delete;

  // Reclaims every page on the LRU, on the shrinker thread, and returns what that returned.
  ReclaimResult shrink_now() CUSED_EXCLUDES(mutex_);
  // Stress mode: reclaim continuously.
  void set_stress(bool on) CUSED_EXCLUDES(mutex_);
  ShrinkerStats stats() const CUSED_EXCLUDES(mutex_);

 private:
  void run();
  void wake();
  void drain_wakeups();
  void reclaim_all(bool pressure, std::vector<std::promise<ReclaimResult>> requests)
      CUSED_EXCLUDES(mutex_);

  PageLru& lru_;
  std::vector<std::unique_ptr<PressureSource>> sources_;
  int wake_fd_ = -1;  // eventfd: requests, stress toggles, stop

  mutable sync::Mutex mutex_;
  ShrinkerStats stats_ CUSED_GUARDED_BY(mutex_);
  std::vector<std::promise<ReclaimResult>> pending_ CUSED_GUARDED_BY(mutex_);
  bool stop_ CUSED_GUARDED_BY(mutex_) = false;

  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace cused::core::alloc
