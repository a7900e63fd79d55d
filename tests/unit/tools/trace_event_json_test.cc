// SPDX-License-Identifier: GPL-2.0-only
// A cused trace in the Trace Event Format (tools/programs/trace_event_json.h, docs/tracing.md "In a trace
// viewer"), on lines as the daemon writes them (cused/host/ftrace_text.h): the processes named by
// their programs and the threads comm-tid, a call's two slices joined by flows both ways, every
// wait and hold a slice with its lock, variant and holder, and slices that nest on each thread.
#include "tools/programs/trace_event_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/lock_trace.h"
#include "cused/host/ftrace_text.h"

namespace cused::tools {
namespace {

using core::TraceEvent;
using core::TraceEventType;
using nlohmann::json;

constexpr int kClientPid = 4000, kClient = 4001, kServerPid = 5000, kServer = 5002, kDaemon = 900;

// One line of the daemon's text: `us` µs into the trace, for `tid` of `tgid`.
std::string line(const char* comm, int tid, int tgid, long us, TraceEventType type,
                 TraceEvent::Fields fields) {
  TraceEvent event;
  event.type = type;
  event.time = std::chrono::steady_clock::time_point(std::chrono::seconds(100) +
                                                     std::chrono::microseconds(us));
  event.fields = fields;
  return host::trace_line({comm, tid, tgid, 0}, event);
}

std::string fmt_process(int tgid, const char* program) {
  return "# cused: process " + std::to_string(tgid) + " " + program + "\n";
}

// A call from the client to the server and its reply, with the lock waits and holds binder-ab
// reads, the server waiting behind the client for the allocator's mutex; then a one-way call and
// a shrinker pass on a daemon thread.
std::string sample_trace() {
  const std::uint64_t kAlloc = static_cast<std::uint64_t>(core::TracedLock::alloc);
  std::string text = host::trace_header();
  // transaction=7: a two-way call; reply 8.
  text += line("client-main", kClient, kClientPid, 10, TraceEventType::kTransaction,
               {7, 1, kServerPid, 0, 0, 0x10, 0});
  text += line("client-main", kClient, kClientPid, 30, TraceEventType::kLockReleased,
               {kAlloc, 0, 0, 15000, 120, 1});  // held 15 µs, preempted once
  text += line("server-worker", kServer, kServerPid, 40, TraceEventType::kTransactionReceived, {7});
  text += line("server-worker", kServer, kServerPid, 45, TraceEventType::kLockContended,
               {kAlloc, 0, 0, kClient, 139});
  text += line("server-worker", kServer, kServerPid, 60, TraceEventType::kLockAcquired,
               {kAlloc, 0, 0, 14000, 110});  // waited 14 µs
  text += line("server-worker", kServer, kServerPid, 72, TraceEventType::kLockReleased,
               {kAlloc, 0, 0, 12000, 110, 0});  // then held 12 µs: begins as the wait ends
  text += line("server-worker", kServer, kServerPid, 80, TraceEventType::kTransaction,
               {8, 0, kClientPid, kClient, 1, 0, 0});
  text += line("client-main", kClient, kClientPid, 95, TraceEventType::kTransactionReceived, {8});
  // transaction=9: one-way (TF_ONE_WAY).
  text += line("client-main", kClient, kClientPid, 200, TraceEventType::kTransaction,
               {9, 1, kServerPid, 0, 0, 0, 0x01});
  text +=
      line("server-worker", kServer, kServerPid, 230, TraceEventType::kTransactionReceived, {9});
  text += line("cused", kDaemon, kDaemon, 300, TraceEventType::kShrinkerPass, {4, 2, 0, 20000});
  text += "# cused: dropped per event: binder_ioctl=3\n";
  text += fmt_process(kClientPid, "client");
  text += fmt_process(kServerPid, "server");
  text += fmt_process(kDaemon, "cused");
  text += "# cused: 11 events written, 3 dropped (rings of 16384 events per daemon thread)\n";
  return text;
}

TraceJson convert(const std::string& text) {
  std::istringstream in(text);
  return trace_event_json(in);
}

std::vector<json> events_where(const json& document, const std::string& ph,
                               const std::string& name = "") {
  std::vector<json> out;
  for (const auto& event : document.at("traceEvents"))
    if (event.at("ph") == ph && (name.empty() || event.at("name") == name)) out.push_back(event);
  return out;
}

TEST(TraceEventJson, EveryEventHasTheFieldsTheViewersRequire) {
  TraceJson converted = convert(sample_trace());
  ASSERT_TRUE(converted.document.at("traceEvents").is_array());
  EXPECT_EQ(converted.document.at("displayTimeUnit"), "ns");
  for (const auto& event : converted.document.at("traceEvents")) {
    for (const char* key : {"name", "ph", "pid", "tid"})
      EXPECT_TRUE(event.contains(key)) << key << " missing in " << event.dump();
    if (event.at("ph") != "M") {
      EXPECT_TRUE(event.at("ts").is_number()) << event.dump();
    }
    if (event.at("ph") == "X") {
      EXPECT_GE(event.at("dur").get<double>(), 0) << event.dump();
    }
  }
  // Survives a write and a read as text.
  EXPECT_EQ(json::parse(converted.document.dump()), converted.document);
}

TEST(TraceEventJson, ProcessesAreNamedByProgramAndThreadsCommTid) {
  TraceJson converted = convert(sample_trace());
  std::map<int, std::string> processes;
  for (const auto& event : events_where(converted.document, "M", "process_name"))
    processes[event.at("pid").get<int>()] = event.at("args").at("name");
  EXPECT_EQ(processes, (std::map<int, std::string>{
                           {kClientPid, "client"}, {kServerPid, "server"}, {kDaemon, "cused"}}));
  std::set<std::string> threads;
  for (const auto& event : events_where(converted.document, "M", "thread_name"))
    threads.insert(event.at("args").at("name").get<std::string>());
  EXPECT_EQ(threads,
            (std::set<std::string>{"client-main-4001", "server-worker-5002", "cused-900"}));
}

TEST(TraceEventJson, ACallIsASliceOnEachSideJoinedByFlowsThereAndBack) {
  TraceJson converted = convert(sample_trace());
  EXPECT_EQ(converted.counts.calls, 1u);
  EXPECT_EQ(converted.counts.one_way, 1u);
  auto caller = events_where(converted.document, "X", "binder transaction");
  auto server = events_where(converted.document, "X", "binder reply");
  ASSERT_EQ(caller.size(), 1u);
  ASSERT_EQ(server.size(), 1u);
  const double base = 100e6;
  EXPECT_DOUBLE_EQ(caller[0].at("ts").get<double>() - base, 10);
  EXPECT_DOUBLE_EQ(caller[0].at("dur").get<double>(), 85);  // to the reply's receipt at 95
  EXPECT_EQ(caller[0].at("tid"), kClient);
  EXPECT_DOUBLE_EQ(server[0].at("ts").get<double>() - base, 40);
  EXPECT_DOUBLE_EQ(server[0].at("dur").get<double>(), 40);  // to its reply at 80
  EXPECT_EQ(server[0].at("pid"), kServerPid);
  // Flow ids: each "s" has its "f" (bound to the enclosing slice), each inside a slice of its
  // thread.
  auto starts = events_where(converted.document, "s");
  auto finishes = events_where(converted.document, "f");
  ASSERT_EQ(starts.size(), 3u);  // call, reply, one-way
  ASSERT_EQ(finishes.size(), 3u);
  std::map<std::uint64_t, std::pair<int, int>> tids;  // id: from tid, to tid
  for (const auto& s : starts) tids[s.at("id")].first = s.at("tid");
  for (const auto& f : finishes) {
    EXPECT_EQ(f.at("bp"), "e");
    tids[f.at("id")].second = f.at("tid");
  }
  EXPECT_EQ(tids[14], std::make_pair(kClient, kServer));  // the call: caller to server
  EXPECT_EQ(tids[15], std::make_pair(kServer, kClient));  // its reply: back
  EXPECT_EQ(tids[18], std::make_pair(kClient, kServer));  // the one-way call
  for (const auto& flow : starts) {
    bool inside = false;
    for (const auto& slice : events_where(converted.document, "X"))
      inside = inside || (slice.at("tid") == flow.at("tid") && slice.at("ts") <= flow.at("ts") &&
                          flow.at("ts").get<double>() <
                              slice.at("ts").get<double>() + slice.at("dur").get<double>());
    EXPECT_TRUE(inside) << flow.dump();
  }
}

TEST(TraceEventJson, AWaitAndAHoldAreSlicesWithTheLockVariantAndHolder) {
  TraceJson converted = convert(sample_trace());
  EXPECT_EQ(converted.counts.lock_waits, 1u);
  EXPECT_EQ(converted.counts.lock_holds, 2u);
  auto waits = events_where(converted.document, "X", "wait alloc");
  ASSERT_EQ(waits.size(), 1u);
  const json& wait = waits[0];
  EXPECT_EQ(wait.at("cat"), "cused_lock");
  EXPECT_EQ(wait.at("tid"), kServer);
  EXPECT_DOUBLE_EQ(wait.at("ts").get<double>() - 100e6, 46);  // 60 - 14 µs
  EXPECT_DOUBLE_EQ(wait.at("dur").get<double>(), 14);
  EXPECT_EQ(wait.at("args").at("lock"), "alloc");
  EXPECT_EQ(wait.at("args").at("variant"), "mutex");
  EXPECT_EQ(wait.at("args").at("wait_ns"), 14000);
  EXPECT_EQ(wait.at("args").at("holder"), kClient);
  EXPECT_EQ(wait.at("args").at("holder_comm"), "client-main");
  EXPECT_EQ(wait.at("args").at("holder_prio"), 139);
  auto holds = events_where(converted.document, "X", "hold alloc");
  ASSERT_EQ(holds.size(), 2u);
  std::map<int, json> by_tid;
  for (const auto& hold : holds) by_tid[hold.at("tid").get<int>()] = hold;
  EXPECT_EQ(by_tid[kClient].at("args").at("hold_ns"), 15000);
  EXPECT_EQ(by_tid[kClient].at("args").at("nivcsw"), 1);
  EXPECT_DOUBLE_EQ(by_tid[kServer].at("ts").get<double>() - 100e6, 60);  // as the wait ends
  EXPECT_EQ(events_where(converted.document, "X", "shrinker pass").size(), 1u);
}

TEST(TraceEventJson, SlicesNestOnEveryThread) {
  TraceJson converted = convert(sample_trace());
  EXPECT_EQ(converted.counts.clipped, 0u);
  std::map<int, std::vector<std::pair<double, double>>> by_tid;
  for (const auto& slice : events_where(converted.document, "X"))
    by_tid[slice.at("tid")].push_back(
        {slice.at("ts").get<double>(),
         slice.at("ts").get<double>() + slice.at("dur").get<double>()});
  for (auto& [tid, slices] : by_tid) {
    std::sort(slices.begin(), slices.end(), [](auto a, auto b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open;
    for (auto [begin, end] : slices) {
      while (!open.empty() && open.back() <= begin) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(end, open.back() + 1e-9) << "thread " << tid;
      }
      open.push_back(end);
    }
  }
}

TEST(TraceEventJson, TheDropsOfTheEndLinesAreInOtherData) {
  TraceJson converted = convert(sample_trace());
  EXPECT_EQ(converted.document.at("otherData").at("dropped").at("binder_ioctl"), 3);
}

}  // namespace
}  // namespace cused::tools
