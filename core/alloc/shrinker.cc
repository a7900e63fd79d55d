// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/shrinker.h"

#include "core/trace_events.h"

namespace cused::core::alloc {

Shrinker::Shrinker(PageLru& lru, bool stress, std::vector<std::string> sources,
                   std::vector<std::string> unavailable)
    : lru_(lru) {
  sync::LockGuard guard(mutex_);
  stats_.stress = stress;
  stats_.sources = std::move(sources);
  stats_.unavailable = std::move(unavailable);
}

Shrinker::~Shrinker() {
  sync::LockGuard guard(mutex_);
  for (auto& request : pending_) request.set_value(ReclaimResult{});
}

std::future<ReclaimResult> Shrinker::request() {
  sync::LockGuard guard(mutex_);
  pending_.emplace_back();
  return pending_.back().get_future();
}

void Shrinker::set_stress(bool on) {
  sync::LockGuard guard(mutex_);
  stats_.stress = on;
}

void Shrinker::stop() {
  sync::LockGuard guard(mutex_);
  stop_ = true;
}

ShrinkerStats Shrinker::stats() const {
  sync::LockGuard guard(mutex_);
  return stats_;
}

ShrinkerRound Shrinker::take_round() {
  sync::LockGuard guard(mutex_);
  ShrinkerRound round;
  round.stop = stop_;
  round.stress = stats_.stress;
  // A stopping loop takes nothing: what is pending is answered on destruction.
  if (!stop_) round.requests.swap(pending_);
  return round;
}

ReclaimResult Shrinker::reclaim(bool pressure, std::vector<std::promise<ReclaimResult>> requests) {
  const auto since = trace::start();
  ReclaimResult result = lru_.reclaim();
  // Each page the walk visited was either reclaimed or skipped. A walk that visited nothing and
  // that nobody asked for (the stress loop's passes over an empty LRU) is no event: the kernel
  // does not call a shrinker's scan when its count is 0, and under --shrinker-stress such
  // passes, thousands a second, filled the shrinker thread's trace ring (issue 47 point 2).
  const bool asked = pressure || !requests.empty();
  if (asked || result.pages + result.skipped > 0)
    trace::emit_since(since, TraceEventType::kShrinkerPass, result.pages + result.skipped,
                      result.pages, result.skipped);
  sync::LockGuard guard(mutex_);
  ++stats_.passes;
  stats_.pages += result.pages;
  stats_.bytes += result.bytes;
  stats_.skipped += result.skipped;
  if (pressure) ++stats_.pressure_events;
  stats_.requests += requests.size();
  for (auto& request : requests) request.set_value(result);
  return result;
}

}  // namespace cused::core::alloc
