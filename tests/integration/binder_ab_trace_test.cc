// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --trace (issue 32 point 5) against a real cused serving two devices of different
// alloc_lock designs, as tools/reproduce's alloc-lock does: one traced run per variant, its
// trace file, the lock summary after the table, in DIR/summary.json and in the --json record,
// and the wait panel of the --svg plot.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <variant>

#include "cused/host/ftrace_line.h"
#include "tests/integration/cused_daemon.h"
#include "tests/integration/file_contents.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"
#include "tools/programs/binderctl_control.h"

namespace cused {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::ToolProcess;

class BinderAbTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.serving());
    for (const char* device : {"a", "b"})
      servicemanagers_.push_back(std::make_unique<ToolProcess>(std::vector<std::string>{
          testing::binary_from_env("SERVICEMANAGER_BINARY"), "--device", dir_ + "/" + device}));
  }
  void TearDown() override { fs::remove_all(out_); }

  std::string dir_ = testing::make_temp_dir("cused-ab-trace-");
  std::string out_ = testing::make_temp_dir("binder-ab-trace-out-");
  testing::CusedDaemon daemon_{
      dir_, {"--device", "a:alloc_lock=mutex", "--device", "b:alloc_lock=spin-install"}, "b"};
  // Declared after daemon_: they end before it.
  std::vector<std::unique_ptr<ToolProcess>> servicemanagers_;
};

// The traced run's Trace Event Format (docs/tracing.md, "In a trace viewer"), read back: named
// processes and threads, the calls as slices, and every wait and hold of the text as a slice of
// its thread with the lock, variant and duration of its line.
void expect_in_trace_viewer_json(const std::string& text, const std::string& json_path) {
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << json_path;
  auto document = nlohmann::json::parse(in);
  ASSERT_TRUE(document.at("traceEvents").is_array());
  std::multiset<std::string> slices;  // "tid name duration-ns-field=value"
  std::size_t process_names = 0, thread_names = 0, calls = 0;
  for (const auto& event : document["traceEvents"]) {
    const std::string ph = event.at("ph");
    if (ph == "M") {
      process_names += event["name"] == "process_name";
      thread_names += event["name"] == "thread_name";
    } else if (ph == "X") {
      calls += event["name"] == "binder transaction";
      const auto& args = event["args"];
      for (const char* key : {"wait_ns", "hold_ns"})
        if (args.contains(key))
          slices.insert(fmt::format(
              "{} {} {}={} {}", event["tid"].get<int>(), event["name"].get<std::string>(), key,
              args[key].get<long long>(), args["variant"].get<std::string>()));
    }
  }
  EXPECT_GT(process_names, 0u);
  EXPECT_GT(thread_names, 0u);
  EXPECT_GT(calls, 0u) << json_path;
  std::istringstream lines(text);
  std::size_t lock_lines = 0;
  for (std::string text_line; std::getline(lines, text_line);) {
    auto line = host::parse_ftrace_line(text_line);
    if (!line) continue;
    const char* kind = line->event == "cused_lock_acquired"   ? "wait"
                       : line->event == "cused_lock_released" ? "hold"
                                                              : nullptr;
    if (!kind) continue;
    ++lock_lines;
    const char* key = kind == std::string("wait") ? "wait_ns" : "hold_ns";
    auto found = slices.find(fmt::format("{} {} {} {}={} {}", line->tid, kind, *line->field("lock"),
                                         key, *line->field(key), *line->field("variant")));
    EXPECT_NE(found, slices.end()) << "not in " << json_path << ": " << text_line;
    if (found != slices.end()) slices.erase(found);
  }
  EXPECT_GT(lock_lines, 0u) << "no lock events to check in " << json_path;
  EXPECT_TRUE(slices.empty()) << slices.size() << " slices of no line, e.g. " << *slices.begin();
}

TEST_F(BinderAbTraceTest, ATracedRunPerVariantGivesItsTraceTheSummaryAndTheWaitPanel) {
  std::string traces = out_ + "/traces", json = out_ + "/ab.json", svg = out_ + "/ab.svg";
  // Three blocks sharing the fixture's daemon (no --block-setup): the traced runs are block 2's.
  std::vector<std::string> options{"--mount", dir_,         "--runs", "8",       "--blocks",
                                   "3",       "--progress", "none",   "--trace", traces,
                                   "--json",  json,         "--svg",  svg};
  std::vector<std::string> argv{testing::binary_from_env("BINDER_AB_BINARY")};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"a:alloc_lock=mutex", "b:alloc_lock=spin-install", "--",
                           testing::binary_from_env("BINDER_THROUGHPUT_BINARY"), "--device",
                           "{dev}", "-w", "4", "-i", "100", "-s", "4096"});
  ToolProcess tool(argv);
  auto result = tool.finish(90s);
  ASSERT_EQ(testing::exit_status(result), 0) << result.output;

  // Each side's trace is the daemon's, written while only that side's run was traced: a file
  // of ftrace lines with the run's transactions.
  for (const char* side : {"A", "B"}) {
    std::string trace = testing::read_file(traces + "/" + side + ".trace");
    EXPECT_EQ(trace.rfind("# tracer: nop\n", 0), 0u) << side;
    EXPECT_NE(trace.find(": binder_transaction: "), std::string::npos) << side;
    expect_in_trace_viewer_json(trace, traces + "/" + side + ".trace.json");
  }
  EXPECT_NE(result.output.find("Traced window (--trace): one extra run per variant"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("| variant | lock | waiter | waits |"), std::string::npos);
  EXPECT_NE(result.output.find("| variant | lock | holder | holds |"), std::string::npos);

  std::ifstream summary_in(traces + "/summary.json");
  auto summary = nlohmann::json::parse(summary_in);
  ASSERT_EQ(summary.size(), 2u);
  EXPECT_EQ(summary[0]["side"], "A");
  EXPECT_EQ(summary[1]["side"], "B");
  // One daemon traces both devices: each side leaves out the other's alloc_lock.
  EXPECT_EQ(summary[0]["summary"]["excluded_variant"], "spin-install");
  EXPECT_EQ(summary[1]["summary"]["excluded_variant"], "mutex");
  for (const auto& run : summary) {
    EXPECT_EQ(run["block"], 2);
    EXPECT_GT(run["written"].get<int>(), 0);
    EXPECT_GT(run["metric"].get<double>(), 0);
    EXPECT_GT(run["summary"]["events"].get<int>(), 0);
    // The allocator's locks only: the engine's proc, node and context locks say variant=mutex
    // on both devices.
    for (const char* kind : {"waits", "holds"})
      for (const auto& group : run["summary"][kind])
        if (group["lock"]["lock"] == "alloc" || group["lock"]["lock"] == "alloc_install") {
          EXPECT_NE(group["lock"]["variant"], run["summary"]["excluded_variant"]) << group.dump();
        }
  }
  // The traced runs are not among the measured ones.
  std::ifstream json_in(json);
  auto record = nlohmann::json::parse(json_in);
  EXPECT_EQ(record["a"]["runs"].size(), 3u * 8);
  // --replay reads the record's trace section back and prints the same lock summary.
  auto tables = [](const std::string& output) {
    auto at = output.find("Traced window (--trace)");
    return at == std::string::npos ? std::string{} : output.substr(at);
  };
  ToolProcess replay({testing::binary_from_env("BINDER_AB_BINARY"), "--replay", json});
  auto replayed = replay.finish(30s);
  ASSERT_EQ(testing::exit_status(replayed), 0) << replayed.output;
  EXPECT_FALSE(tables(result.output).empty());
  EXPECT_EQ(tables(replayed.output), tables(result.output));

  std::string plot = testing::read_file(svg);
  EXPECT_NE(plot.find("lock waits in the traced window (--trace)"), std::string::npos);
}

// Ctrl-C while a traced run is running: binder-ab ends as the signal would end it, and the
// daemon's trace is stopped, so that the next trace can start (one runs per daemon: EBUSY).
TEST_F(BinderAbTraceTest, AStopSignalInTheTracedRunStopsTheTrace) {
  std::string traces = out_ + "/traces";
  ToolProcess tool(
      {testing::binary_from_env("BINDER_AB_BINARY"), "--mount", dir_, "--runs", "8", "--progress",
       "none", "--trace", traces, "a:alloc_lock=mutex", "b:alloc_lock=spin-install", "--",
       "/bin/sh", "-c", "sleep 0.5; echo iterations per sec: 1"},
      ToolProcess::Capture::stdout_and_stderr);
  // The daemon creates SIDE.trace when that side's trace starts; its traced run then sleeps in
  // sh. Which side goes first is binder-ab's random order.
  auto started = [&](const char* side) { return fs::exists(traces + "/" + side + ".trace"); };
  ASSERT_TRUE(testing::wait_until([&] { return started("A") || started("B"); }, 60s));
  // The file exists before the daemon has answered the start: a signal in between would come
  // before binder-ab knows its trace runs. The traced run sleeps 0.5 s; come well inside it.
  std::this_thread::sleep_for(150ms);
  kill(tool.pid(), SIGINT);
  auto result = tool.finish(30s);
  EXPECT_EQ(testing::exit_status(result), 128 + SIGINT) << result.output;
  EXPECT_FALSE(started("A") && started("B")) << "the signal came in the first traced run";
  binderctl::ControlFile control(dir_);
  ASSERT_TRUE(control.ok());
  auto next = control.trace(out_ + "/after.trace");
  auto* failure = std::get_if<binderctl::Failure>(&next);
  EXPECT_EQ(failure, nullptr) << failure->what << ": " << std::strerror(failure->err);
  (void)control.trace("");
}

// --trace needs the daemon of the device: a device where no cused serves is an error before the
// first run, not a run without its trace.
TEST_F(BinderAbTraceTest, ADeviceWithoutItsDaemonIsAnError) {
  std::string elsewhere = out_ + "/not-a-mount";
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere + "/binder").put('\n');
  ToolProcess tool({testing::binary_from_env("BINDER_AB_BINARY"), "--runs", "8", "--progress",
                    "none", "--trace", out_ + "/traces", dir_ + "/a", elsewhere + "/binder", "--",
                    "/bin/sh", "-c", "echo ran >>" + out_ + "/runs; echo iterations per sec: 1"},
                   ToolProcess::Capture::stdout_and_stderr);
  auto result = tool.finish(30s);
  EXPECT_EQ(testing::exit_status(result), 1) << result.output;
  EXPECT_NE(result.output.find("--trace: B (" + elsewhere +
                               "/binder): no cused's binder-control "
                               "beside it"),
            std::string::npos)
      << result.output;
  EXPECT_FALSE(fs::exists(out_ + "/runs"));
}

}  // namespace
}  // namespace cused
