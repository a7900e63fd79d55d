// SPDX-License-Identifier: GPL-2.0-only
// `cused --trace FILE` (docs/tracing.md) on a quickstart-sized run: tools/servicemanager and
// binder-throughput against a daemon that traces. Every line of the file is an ftrace line
// (TASK-PID (TGID) [CPU] FLAGS TIMESTAMP: EVENT: FIELDS) or a '#' comment, and every transaction
// a thread received was traced as sent first, under the same id, to the receiver's process.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/cused_daemon.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::ToolProcess;

const std::regex kLine(
    R"(^ *(.+)-(\d+) +\( *(\d+|-------)\) \[(\d{3})\] \.\.\.\. +(\d+\.\d{6}): (\w+): (.*)$)");
const std::regex kTransaction(
    R"(^transaction=(\d+) dest_node=(\d+) dest_proc=(\d+) dest_thread=(\d+) reply=([01]) )"
    R"(flags=0x[0-9a-f]+ code=0x[0-9a-f]+$)");
const std::regex kReceived(R"(^transaction=(\d+)$)");

struct Sent {
  pid_t dest_proc;
  double time;
};

class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(daemon_.serving()); }

  std::string dir_ = testing::make_temp_dir("cused-trace-");
  std::string trace_ = dir_ + ".trace";
  testing::CusedDaemon daemon_{
      dir_, {"--trace", trace_}, "binder", ToolProcess::Capture::stdout_and_stderr};
};

// S4.1 / S4.4: each call and each reply is sent (binder_transaction, by the sending thread) and
// then received (binder_transaction_received, by a thread of the dest_proc it named).
TEST_F(TraceTest, QuickstartRunWritesFtraceLinesWithMatchingTransactionPairs_S4_1_S4_4) {
  const pid_t daemon_pid = daemon_.pid();
  {
    ToolProcess servicemanager(
        {testing::binary_from_env("SERVICEMANAGER_BINARY"), "--device", dir_ + "/binder"});
    ToolProcess tool({testing::binary_from_env("BINDER_THROUGHPUT_BINARY"), "--device",
                      dir_ + "/binder", "-w", "2", "-i", "200"});
    auto result = tool.finish(60s);
    ASSERT_EQ(testing::exit_status(result), 0) << result.output;
  }
  auto daemon = daemon_.stop();
  ASSERT_EQ(testing::exit_status(daemon), 0) << daemon.output;
  EXPECT_NE(daemon.output.find(", 0 dropped"), std::string::npos) << daemon.output;

  std::ifstream in(trace_);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "# tracer: nop");
  std::map<int, Sent> sent;
  std::map<std::string, int> counts;
  std::size_t pairs = 0, events = 0;
  std::string trailer;
  double last = 0;
  while (std::getline(in, line)) {
    if (line.rfind('#', 0) == 0) {
      trailer = line;
      continue;
    }
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, kLine)) << line;
    ++events;
    const pid_t tid = std::stoi(m[2]);
    const std::string tgid = m[3], event = m[6], fields = m[7];
    const double time = std::stod(m[5]);
    EXPECT_GE(time, last) << line;
    last = time;
    counts[event]++;
    std::smatch f;
    if (event == "binder_transaction") {
      ASSERT_TRUE(std::regex_match(fields, f, kTransaction)) << line;
      EXPECT_NE(tgid, std::to_string(daemon_pid)) << "the sender is the client: " << line;
      EXPECT_NE(tid, daemon_pid) << line;
      sent[std::stoi(f[1])] = {std::stoi(f[3]), time};
    } else if (event == "binder_transaction_received") {
      ASSERT_TRUE(std::regex_match(fields, f, kReceived)) << line;
      auto it = sent.find(std::stoi(f[1]));
      ASSERT_NE(it, sent.end()) << "received, never sent: " << line;
      EXPECT_EQ(std::to_string(it->second.dest_proc), tgid) << line;
      EXPECT_LE(it->second.time, time) << line;
      ++pairs;
    }
  }
  // 200 calls and 200 replies per worker, and servicemanager's calls besides.
  EXPECT_GE(pairs, 800u);
  for (const char* event :
       {"binder_ioctl", "binder_ioctl_done", "binder_command", "binder_return", "binder_write_done",
        "binder_read_done", "binder_wait_for_work", "binder_transaction_alloc_buf",
        "binder_transaction_buffer_release", "binder_txn_latency_free",
        "binder_transaction_node_to_ref", "binder_transaction_ref_to_ref",
        "binder_update_page_range", "binder_alloc_page_start", "binder_alloc_page_end",
        "binder_free_lru_start", "binder_alloc_lru_start"})
    EXPECT_GT(counts[event], 0) << event;
  EXPECT_EQ(trailer, "# cused: " + std::to_string(events) +
                         " events written, 0 dropped (rings of 16384 events per daemon thread)");
  fs::remove(trace_);
}

}  // namespace
}  // namespace cused
