// SPDX-License-Identifier: GPL-2.0-only
// The USDT feed (cused/host/usdt_feed.h, issue 32 point 3): a tracer attached to a probe makes
// core emit into the feed's sink when no trace is being written, a trace being written keeps its
// recorder as the sink, and the feed's sink goes once no probe is attached, so that tracing off
// costs one branch again.
#include "cused/host/usdt_feed.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/trace_events.h"
#include "cused/host/trace_recorder.h"
#include "cused/host/usdt_probes.h"

namespace cused::host {
namespace {

using namespace std::chrono_literals;

core::TraceSink* current_sink() { return core::trace::detail::sink.load(); }

// A feed whose tracer attaches and detaches when the test says.
struct Tracer {
  std::atomic<bool> attached{false};
  std::function<bool()> probe() {
    return [this] { return attached.load(); };
  }
};

TEST(UsdtFeed, AnAttachedTracerMakesCoreEmitIntoTheFeedAndItsDetachStopsIt) {
  Tracer tracer;
  UsdtFeed feed(tracer.probe());
  EXPECT_FALSE(feed.poll());
  EXPECT_FALSE(core::trace::enabled()) << "no tracer, no trace: tracing stays off";
  tracer.attached = true;
  EXPECT_TRUE(feed.poll());
  EXPECT_EQ(current_sink(), &UsdtFeed::sink());
  tracer.attached = false;
  EXPECT_FALSE(feed.poll());
  EXPECT_FALSE(core::trace::enabled());
}

TEST(UsdtFeed, ATraceBeingWrittenKeepsItsRecorderAsTheSink) {
  Tracer tracer;
  UsdtFeed feed(tracer.probe());
  TraceRecorder recorder;
  ASSERT_EQ(recorder.start("/dev/null"), 0);
  tracer.attached = true;
  EXPECT_TRUE(feed.poll()) << "the recorder fires the probes itself";
  EXPECT_EQ(current_sink(), &recorder);
  tracer.attached = false;
  feed.poll();
  EXPECT_EQ(current_sink(), &recorder) << "the feed takes out only its own sink";
  recorder.stop();
  EXPECT_FALSE(core::trace::enabled());
}

TEST(UsdtFeed, AFeedStartedBeforeATraceIsDisplacedAndComesBackAfterIt) {
  Tracer tracer;
  tracer.attached = true;
  UsdtFeed feed(tracer.probe());
  feed.poll();
  TraceRecorder recorder;
  ASSERT_EQ(recorder.start("/dev/null"), 0);
  EXPECT_EQ(current_sink(), &recorder);
  recorder.stop();
  EXPECT_TRUE(feed.poll());
  EXPECT_EQ(current_sink(), &UsdtFeed::sink());
}

// The feed's own thread looks without being asked, every kPollPeriod.
TEST(UsdtFeed, ItsThreadFindsAnAttachedTracer) {
  if (!usdt_probes_built()) GTEST_SKIP() << "built without <sys/sdt.h>: no probes, no thread";
  Tracer tracer;
  UsdtFeed feed(tracer.probe());
  tracer.attached = true;
  const auto deadline = std::chrono::steady_clock::now() + 50 * UsdtFeed::kPollPeriod;
  while (current_sink() != &UsdtFeed::sink() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(current_sink(), &UsdtFeed::sink());
  tracer.attached = false;
}

// With no tracer the daemon's probes are down: usdt_probe_attached() reads the semaphores.
TEST(UsdtFeed, NoTracerRaisesASemaphoreInATest) { EXPECT_FALSE(usdt_probe_attached()); }

}  // namespace
}  // namespace cused::host
