// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/usdt_feed.h"

#include <cstdio>
#include <utility>

#include "cused/host/usdt_probes.h"

namespace cused::host {

void UsdtSink::record(const core::TraceEvent& event) { fire_usdt_probe(event); }

UsdtSink& UsdtFeed::sink() {
  static auto* sink = new UsdtSink();  // never destroyed: see the header
  return *sink;
}

UsdtFeed::UsdtFeed(std::function<bool()> attached) : attached_(std::move(attached)) {
  if (usdt_probes_built()) thread_ = std::thread([this] { run(); });
}

UsdtFeed::~UsdtFeed() {
  {
    std::lock_guard guard(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  core::trace::replace_sink(&sink(), nullptr);
}

// Installs the sink only where there is none (no trace being written), and takes out only its
// own: a trace started or stopped meanwhile keeps what the recorder set.
bool UsdtFeed::poll() {
  const bool attached = attached_();
  if (attached != announced_attached_.exchange(attached))
    std::fputs(attached ? "cused: usdt: a tracer is attached: the probes fire\n"
                        : "cused: usdt: no tracer is attached any more\n",
               stderr);
  if (attached) return core::trace::replace_sink(nullptr, &sink()) || core::trace::enabled();
  core::trace::replace_sink(&sink(), nullptr);
  return false;
}

void UsdtFeed::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    poll();
    lock.lock();
    wake_.wait_for(lock, kPollPeriod, [this] { return stopping_; });
  }
}

}  // namespace cused::host
