// SPDX-License-Identifier: GPL-2.0-only
// binder-throughput --inherit-rt on a priority=android device (S4.12 as the Android common
// kernel extends it, docs/variants.md), as tools/reproduce's CUSED_REPRODUCE_RT condition runs it:
// a real cused, its servicemanager, and binder-throughput under `chrt -f`. Its workers and all
// their threads start at SCHED_FIFO (forked and created from the chrt'd program), so a worker
// thread seen at SCHED_OTHER is one the driver demoted while it served a call: what a node
// without FLAT_BINDER_FLAG_INHERIT_RT does to a real-time caller's call, and what --inherit-rt's
// nodes must not do.
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cused_daemon.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::ToolProcess;

// Fields of /proc/PID/stat after the command's closing parenthesis, which may hold spaces.
std::vector<std::string> stat_fields(const fs::path& stat) {
  std::ifstream in(stat);
  std::string line;
  std::getline(in, line);
  auto end = line.rfind(')');
  std::vector<std::string> fields;
  if (end == std::string::npos) return fields;
  std::istringstream rest(line.substr(end + 2));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

// stat(5) numbers fields from 1 and the command is field 2: field N is fields[N - 3].
constexpr std::size_t kParentPid = 4 - 3, kPolicy = 41 - 3;

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> children;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto fields = stat_fields(entry.path() / "stat");
    if (fields.size() > kParentPid && std::stoi(fields[kParentPid]) == parent)
      children.push_back(std::stoi(name));
  }
  return children;
}

struct PolicySamples {
  int fifo = 0;
  int other = 0;
};

// Every thread of every child of `parent`, once.
void sample_children(pid_t parent, PolicySamples& samples) {
  for (pid_t child : children_of(parent)) {
    std::error_code error;
    for (const auto& task :
         fs::directory_iterator(fs::path("/proc") / std::to_string(child) / "task", error)) {
      auto fields = stat_fields(task.path() / "stat");
      if (fields.size() <= kPolicy) continue;  // the thread ended while it was read
      int policy = std::stoi(fields[kPolicy]);
      if (policy == SCHED_FIFO) samples.fifo++;
      if (policy == SCHED_OTHER) samples.other++;
    }
  }
}

class InheritRtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(daemon_.serving());
    servicemanager_ = std::make_unique<ToolProcess>(std::vector<std::string>{
        testing::binary_from_env("SERVICEMANAGER_BINARY"), "--device", device()});
  }

  std::string device() const { return daemon_.dir() + "/binder"; }

  // binder-throughput at SCHED_FIFO 1 (CUSED_REPRODUCE_RT=fifo), its workers' threads sampled
  // until their calls are over.
  PolicySamples run_at_fifo(const std::string& extra) {
    // Through the shell, which finds chrt on PATH (ToolProcess execs a path); each exec keeps the
    // pid, the workers' parent.
    ToolProcess tool({"/bin/sh", "-c",
                      "exec chrt -f 1 \"$0\" --device \"$1\" -w 2 -i 3000 " + extra,
                      testing::binary_from_env("BINDER_THROUGHPUT_BINARY"), device()});
    PolicySamples samples;
    // Until the workers' calls are over (or a hang's deadline, which finish() then reports). Each
    // wait is long enough for ToolProcess to read at all: it rounds what is left down to whole ms.
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!tool.read_until("collecting results", 10ms) &&
           std::chrono::steady_clock::now() < deadline)
      sample_children(tool.pid(), samples);
    auto result = tool.finish(30s);
    EXPECT_EQ(testing::exit_status(result), 0) << result.output;
    return samples;
  }

  testing::CusedDaemon daemon_{testing::make_temp_dir("cused-inherit-rt-"),
                               {"--device", "binder:priority=android"}};
  // Declared after daemon_: it ends before it.
  std::unique_ptr<ToolProcess> servicemanager_;
};

// S4.12 (priority=android): the workers' nodes allow RT inheritance, so a thread serving a
// SCHED_FIFO worker's call keeps SCHED_FIFO; no worker thread is ever seen at SCHED_OTHER. At
// least 20 samples: without --inherit-rt about one in six is SCHED_OTHER (the test below).
TEST_F(InheritRtTest, S4_12_InheritRtNodesKeepTheServingThreadsAtFifo) {
  auto samples = run_at_fifo("--inherit-rt");
  EXPECT_GE(samples.fifo, 20);
  EXPECT_EQ(samples.other, 0) << samples.fifo << " samples at SCHED_FIFO";
}

// The control: the same run without --inherit-rt (libbinder's default, Google's
// binderThroughputTest's nodes), where the serving threads run SCHED_OTHER during each call.
TEST_F(InheritRtTest, S4_12_WithoutInheritRtTheServingThreadsRunAtOther) {
  auto samples = run_at_fifo("");
  EXPECT_GT(samples.other, 0) << samples.fifo << " samples at SCHED_FIFO, none at SCHED_OTHER";
}

}  // namespace
}  // namespace cused
