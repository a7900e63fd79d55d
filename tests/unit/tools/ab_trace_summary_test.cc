// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --trace's reading of a cused trace (issue 32 point 5; the line itself is
// cused/host/ftrace_line.h's, tests/unit/host/ftrace_line_test.cc): the lock
// events' waits and holds per lock and per priority of the thread, whom the waits were behind,
// and the holders preempted while holding (nivcsw), on lines as cused writes them
// (docs/tracing.md); the table and the plot's panel.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

#include "tools/ab/lock_trace_summary.h"
#include "tools/ab/report.h"
#include "tools/ab/trace_report.h"

namespace cused::tools::ab {
namespace {

LockTraceSummary summarize(const std::string& text, const std::string& exclude = "") {
  std::istringstream in(text);
  return summarize_lock_trace(in, exclude);
}

TEST(AbLockTraceSummary, PriorityClassesAreTheKernelsPrio) {
  EXPECT_EQ(priority_class(110), "nice -10");
  EXPECT_EQ(priority_class(120), "nice 0");
  EXPECT_EQ(priority_class(139), "nice 19");
  EXPECT_EQ(priority_class(98), "FIFO 1");
  EXPECT_EQ(priority_class(0), "FIFO 99");
}

TEST(AbLockTraceSummary, PercentilesAreNearestRankValuesThatWereMeasured) {
  Durations d{{1, 2, 3, 4, 5, 6, 7, 8, 9, 100}};
  EXPECT_EQ(d.percentile(0.5), 5u);
  EXPECT_EQ(d.percentile(0.99), 100u);
  EXPECT_EQ(d.percentile(0.9), 9u);
  EXPECT_EQ(d.max(), 100u);
  EXPECT_EQ(d.total(), 145u);
  EXPECT_EQ(Durations{}.percentile(0.5), 0u);
}

// Lines of a real trace (tools/reproduce --quick --trace alloc-lock on 2026-12-05, device a:
// alloc_lock=mutex; a cused without the priority fields), in the file's order, which is not the
// timestamps' (each daemon thread's lines come as it flushes them): the threads are told apart by
// their comm.
const char kWithoutPriorities[] =
    "# tracer: nop\n"
    " binder-backgrou-26737   (  26670) [001] .... 27280.761282: cused_lock_released: "
    "lock=alloc variant=mutex policy=barging hold_ns=1862119\n"
    " binderThroughpu-27730   (  27730) [001] .... 27280.798805: binder_transaction: "
    "transaction=63114 dest_node=1 dest_proc=26469 dest_thread=0 reply=0 flags=0x10 code=0x2\n"
    " binderThroughpu-27736   (  27736) [001] .... 27280.798858: cused_lock_contended: "
    "lock=alloc variant=mutex policy=barging\n"
    " binderThroughpu-27730   (  27730) [001] .... 27280.798897: cused_lock_released: "
    "lock=alloc variant=mutex policy=barging hold_ns=91496\n"
    " binderThroughpu-27736   (  27736) [001] .... 27280.798914: cused_lock_acquired: "
    "lock=alloc variant=mutex policy=barging wait_ns=56344\n"
    " binderThroughpu-27736   (  27736) [001] .... 27280.798915: cused_lock_released: "
    "lock=alloc variant=mutex policy=barging hold_ns=871\n"
    " binder-backgrou-26737   (  26670) [001] .... 27280.801974: cused_lock_acquired: "
    "lock=alloc variant=mutex policy=barging wait_ns=102842\n"
    "           cused-26427   (  26417) [000] .... 27280.766753: cused_lock_released: "
    "lock=alloc variant=mutex policy=barging hold_ns=41682\n";

TEST(AbLockTraceSummary, WithoutPrioritiesTheWaitsAndHoldsAreGroupedByComm) {
  auto summary = summarize(kWithoutPriorities);
  EXPECT_EQ(summary.events, 8u);
  EXPECT_EQ(summary.lock_events, 7u);
  // From the earliest line to the latest, whatever their order in the file.
  EXPECT_NEAR(summary.window_seconds, 27280.801974 - 27280.761282, 1e-9);
  ASSERT_EQ(summary.waits.size(), 2u);
  const WaitGroup& background = summary.waits[0];  // "comm binder-backgrou" sorts first
  EXPECT_EQ(background.waiter, "comm binder-backgrou");
  EXPECT_EQ(background.waits.ns, (std::vector<std::uint64_t>{102842}));
  // Its acquired line has no contended line before it in this excerpt: whom it waited behind is
  // unknown.
  EXPECT_EQ(background.behind.at("unknown").first, 1u);
  const WaitGroup& workload = summary.waits[1];
  EXPECT_EQ(workload.lock.text(), "alloc (mutex, barging)");
  EXPECT_EQ(workload.waiter, "comm binderThroughpu");
  EXPECT_EQ(workload.waits.max(), 56344u);
  EXPECT_EQ(workload.behind.at("unknown").first, 1u);  // a contended without holder_prio=
  ASSERT_EQ(summary.holds.size(), 3u);
  EXPECT_EQ(summary.holds[0].holder, "comm binder-backgrou");
  EXPECT_EQ(summary.holds[0].holds.ns, (std::vector<std::uint64_t>{1862119}));
  EXPECT_EQ(summary.holds[0].with_nivcsw, 0u);  // the daemon did not say
  EXPECT_EQ(summary.holds[1].holds.ns, (std::vector<std::uint64_t>{871, 91496}));
  EXPECT_EQ(summary.holds[2].holder, "comm cused");  // the shrinker, on the daemon's thread
  auto table = trace_tables({{.side = "A", .path = "/t/A.trace", .summary = summary}});
  EXPECT_EQ(table.find("rings dropped"), std::string::npos) << table;  // nothing was dropped
  EXPECT_EQ(table.find("partial"), std::string::npos) << table;
  // The drops per event name: the counts of the lock events dropped are marked partial, with by
  // how many, rather than quoted as exact (issue 47 point 2).
  auto lossy =
      trace_tables({{.side = "A",
                     .path = "/t/A.trace",
                     .written = 300,
                     .dropped = 100,
                     .dropped_by_event = {{"binder_ioctl", 88}, {"cused_lock_released", 12}},
                     .summary = summary}});
  EXPECT_NE(lossy.find("the daemon's rings dropped 100 events (25.0 %): binder_ioctl=88 "
                       "cused_lock_released=12"),
            std::string::npos)
      << lossy;
  EXPECT_NE(lossy.find("A: partial: 12 cused_lock_released events were dropped (locks and threads "
                       "unknown), so each of A's holds counts (marked ≥) misses up to 12"),
            std::string::npos)
      << lossy;
  EXPECT_NE(lossy.find("| ≥ 1 |"), std::string::npos) << lossy;  // a holds count
  EXPECT_EQ(lossy.find("cused_lock_acquired events were dropped"), std::string::npos) << lossy;
  EXPECT_NE(table.find("| A | alloc (mutex, barging) | comm binder-backgrou | 1 | 1862.1 | "
                       "1862.1 | 1862.1 | not in the trace |"),
            std::string::npos)
      << table;
}

// The fields a cused that reports priorities adds: contended's holder= holder_prio=, acquired's
// prio=, released's prio= nivcsw=.
const char kWithPriorities[] =
    " binderThroughpu-1201    (   1200) [000] ....  7001.000100: cused_lock_contended: "
    "lock=alloc variant=mutex policy=barging holder=1301 holder_prio=139\n"
    " binderThroughpu-1201    (   1200) [000] ....  7001.000400: cused_lock_acquired: "
    "lock=alloc variant=mutex policy=barging wait_ns=300000 prio=110\n"
    " binder-backgrou-1301    (   1300) [001] ....  7001.000390: cused_lock_released: "
    "lock=alloc variant=mutex policy=barging hold_ns=310000 prio=139 nivcsw=2\n"
    " binderThroughpu-1202    (   1200) [001] ....  7001.000500: cused_lock_contended: "
    "lock=alloc variant=mutex policy=barging holder=1201 holder_prio=110\n"
    " binderThroughpu-1202    (   1200) [001] ....  7001.000510: cused_lock_acquired: "
    "lock=alloc variant=mutex policy=barging wait_ns=10000 prio=110\n"
    " binderThroughpu-1201    (   1200) [000] ....  7001.000505: cused_lock_released: "
    "lock=alloc variant=mutex policy=barging hold_ns=100000 prio=110 nivcsw=0\n"
    " binder-backgrou-1301    (   1300) [001] ....  7001.000700: cused_lock_released: "
    "lock=alloc variant=mutex policy=barging hold_ns=12000 prio=139 nivcsw=0\n";

TEST(AbLockTraceSummary, PrioritiesWhomTheWaitsWereBehindAndPreemptedHolders) {
  auto summary = summarize(kWithPriorities);
  ASSERT_EQ(summary.waits.size(), 1u);
  const WaitGroup& waits = summary.waits[0];
  EXPECT_EQ(waits.waiter, "nice -10");
  EXPECT_EQ(waits.waits.count(), 2u);
  EXPECT_EQ(waits.behind.at("nice 19"), (std::pair<std::size_t, std::uint64_t>{1, 300000}));
  EXPECT_EQ(waits.behind.at("nice -10"), (std::pair<std::size_t, std::uint64_t>{1, 10000}));
  ASSERT_EQ(summary.holds.size(), 2u);
  const HoldGroup& foreground = summary.holds[0];  // "nice -10" sorts before "nice 19"
  EXPECT_EQ(foreground.holder, "nice -10");
  EXPECT_EQ(foreground.with_nivcsw, 1u);
  EXPECT_EQ(foreground.preempted, 0u);
  const HoldGroup& background = summary.holds[1];
  EXPECT_EQ(background.holder, "nice 19");
  EXPECT_EQ(background.with_nivcsw, 2u);
  EXPECT_EQ(background.preempted, 1u);
  auto table = trace_tables({{.side = "A", .path = "/t/A.trace", .summary = summary}});
  EXPECT_NE(table.find("| A | alloc (mutex, barging) | nice -10 | 2 | 10.0 | 300.0 | 300.0 | "
                       "0.310 | nice -10: 1, 0.010 ms; nice 19: 1, 0.300 ms |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| nice 19 | 2 | 12.0 | 310.0 | 310.0 | 1 of 2 (50.0 %) |"),
            std::string::npos)
      << table;
}

// One daemon serving both devices traces both: a side leaves out the allocator-lock events of the
// other side's alloc_lock, and only those (a variant whose name merely starts alike stays, and so
// do the engine's locks, whose variant=mutex names no device).
TEST(AbLockTraceSummary, TheOtherDevicesVariantIsLeftOutAndCountedOnlyThat) {
  std::string text = kWithoutPriorities;
  text +=
      " binder-backgrou-1401    (   1400) [000] ....  7001.000800: cused_lock_acquired: "
      "lock=alloc_install variant=spin-install policy=barging wait_ns=7000\n"
      " binder-backgrou-1401    (   1400) [000] ....  7001.000810: cused_lock_released: "
      "lock=alloc variant=spin-install policy=none hold_ns=15000\n"
      " binder-backgrou-1402    (   1400) [000] ....  7001.000820: cused_lock_acquired: "
      "lock=alloc variant=spin policy=none wait_ns=5000\n";
  auto summary = summarize(text, "spin-install");
  std::string engine_lock =
      " binderThroughpu-1201    (   1200) [000] ....  7001.000900: cused_lock_acquired: "
      "lock=proc_inner variant=mutex policy=barging wait_ns=3000 prio=110\n";
  auto with_engine_lock = summarize(text + engine_lock, "mutex");
  EXPECT_EQ(with_engine_lock.excluded, 7u);  // the 7 alloc lines of variant=mutex, not proc_inner
  ASSERT_EQ(with_engine_lock.waits.size(), 3u);
  EXPECT_EQ(with_engine_lock.waits[2].lock.text(), "proc_inner (mutex, barging)");
  EXPECT_EQ(summary.excluded, 2u);
  EXPECT_EQ(summary.excluded_variant, "spin-install");
  EXPECT_EQ(summary.lock_events, 8u);
  std::size_t spin_waits = 0;  // a variant whose name starts as the excluded one's
  for (const auto& group : summary.waits) {
    EXPECT_NE(group.lock.variant, "spin-install");
    spin_waits += group.lock.variant == "spin" ? group.waits.count() : 0;
  }
  EXPECT_EQ(spin_waits, 1u);
  // Without a variant to leave out, all of them are read.
  EXPECT_EQ(summarize(text).lock_events, 10u);
}

// -1 is the daemon's prio for a task that is gone, and holder=0 holder_prio=-1 a hold that began
// before the trace: neither is a priority class.
TEST(AbLockTraceSummary, APrioOfMinusOneIsNoPriority) {
  auto summary = summarize(
      " binderThroughpu-1201    (   1200) [000] ....  7001.000100: cused_lock_contended: "
      "lock=proc_inner variant=mutex policy=barging holder=0 holder_prio=-1\n"
      " binderThroughpu-1201    (   1200) [000] ....  7001.000400: cused_lock_acquired: "
      "lock=proc_inner variant=mutex policy=barging wait_ns=300000 prio=-1\n");
  ASSERT_EQ(summary.waits.size(), 1u);
  EXPECT_EQ(summary.waits[0].waiter, "comm binderThroughpu");
  EXPECT_EQ(summary.waits[0].behind.count("unknown"), 1u);
}

TEST(AbLockTraceSummary, TheJsonRoundTripKeepsEveryFigure) {
  auto summary = summarize(kWithPriorities, "spin-install");
  auto back = lock_summary_from_json(to_json(summary));
  EXPECT_EQ(to_json(back), to_json(summary));
  EXPECT_EQ(to_json(summary)["waits"][0]["waits"]["p99_ns"], 300000);
  EXPECT_EQ(to_json(summary)["holds"][1]["preempted"], 1);
}

// The plot's panel: a curve per variant and waiter class, in the variant's colour, with a legend
// line each; and the record keeps the traced runs for --replay.
TEST(AbLockTraceSummary, ThePlotGetsAWaitPanelWithACurvePerVariantAndClass) {
  Analysis analysis;
  analysis.name = "alloc-lock";
  analysis.metric_name = "iterations per sec";
  analysis.a = {"a", "/m/a"};
  analysis.b = {"b", "/m/b"};
  for (int i = 0; i < 8; ++i) {
    analysis.runs_a.push_back(3000 + 10 * i);
    analysis.runs_b.push_back(4000 + 10 * i);
  }
  BootstrapOptions bootstrap;
  bootstrap.resamples = 200;
  analysis = analyze(analysis, bootstrap);
  auto without = svg_plot(analysis);
  analysis.traces = {{.side = "A", .path = "/t/A.trace", .summary = summarize(kWithoutPriorities)},
                     {.side = "B", .path = "/t/B.trace", .summary = summarize(kWithPriorities)}};
  auto svg = svg_plot(analysis);
  EXPECT_EQ(without.find("wait-cdf"), std::string::npos);
  std::size_t curves = 0;
  for (auto at = svg.find("class=\"wait-cdf\""); at != std::string::npos;
       at = svg.find("class=\"wait-cdf\"", at + 1))
    ++curves;
  EXPECT_EQ(curves, 3u);  // A: two comms; B: nice -10
  EXPECT_NE(svg.find("B nice -10: 2 waits, 0.3 ms in all; P50 10.0, P99 300.0 µs"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>A comm binderThroughpu: 1 waits</title>"), std::string::npos);
  // The legend lines stay inside the picture.
  std::smatch width;
  ASSERT_TRUE(std::regex_search(svg, width, std::regex(R"re(<svg [^>]*width="([0-9.]+)")re")));
  std::regex legend(
      R"re(<text x="([0-9.]+)" y="[0-9.]+" font-size="10">([^<]*waits[^<]*)</text>)re");
  std::size_t legends = 0;
  for (std::sregex_iterator it(svg.begin(), svg.end(), legend), end; it != end; ++it, ++legends)
    EXPECT_LE(std::stod((*it)[1]) + text_width((*it)[2], 10), std::stod(width[1])) << (*it)[2];
  EXPECT_EQ(legends, 3u);
  auto replayed = from_json(to_json(analysis));
  ASSERT_EQ(replayed.traces.size(), 2u);
  EXPECT_EQ(replayed.traces[1].summary.waits[0].behind.at("nice 19").second, 300000u);
}

}  // namespace
}  // namespace cused::tools::ab
