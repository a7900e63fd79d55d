// SPDX-License-Identifier: GPL-2.0-only
// The daemon's trace file (cused/host/trace_recorder.h): core's events from several threads end
// up in one file, in time order, as ftrace lines under the header; a full ring drops and counts,
// and the count is in the file; nothing is emitted once the trace is stopped.
#include "cused/host/trace_recorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cused/host/trace_ring.h"

namespace cused::host {
namespace {

using core::TraceEventType;

std::string temp_path() {
  char path[] = "/tmp/cused-trace-test-XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  return path;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// TASK-PID (TGID) [CPU] FLAGS TIMESTAMP: EVENT: FIELDS
const std::regex kLine(
    R"(^ *(.+)-(\d+) +\( *(\d+|-------)\) \[(\d{3})\] \.\.\.\. +(\d+)\.(\d{6}): (\w+): (.*)$)");

TEST(TraceRing, DropsAndCountsPerEventWhenFullAndDrainsOldestFirst) {
  TraceRing ring(4);
  TraceRecord record;
  std::vector<TraceRing::Push> pushed;
  for (std::uint64_t i = 0; i < 6; ++i) {
    record.event.fields[0] = i;
    record.event.type = i < 5 ? TraceEventType::kReturn : TraceEventType::kLockAcquired;
    pushed.push_back(ring.push(record));
  }
  // The first event makes the ring a quarter full: the collector is asked for then.
  using enum TraceRing::Push;
  EXPECT_EQ(pushed, (std::vector<TraceRing::Push>{kStoredCollectNow, kStored, kStored, kStored,
                                                  kDropped, kDropped}));
  TraceEventCounts dropped{};
  EXPECT_EQ(ring.take_dropped(dropped), 2u);
  EXPECT_EQ(dropped[static_cast<std::size_t>(TraceEventType::kReturn)], 1u);
  EXPECT_EQ(dropped[static_cast<std::size_t>(TraceEventType::kLockAcquired)], 1u);
  EXPECT_EQ(ring.take_dropped(dropped), 0u);
  std::vector<std::uint64_t> drained;
  ring.drain([&](const TraceRecord& r) { drained.push_back(r.event.fields[0]); }, 3);
  EXPECT_EQ(drained, (std::vector<std::uint64_t>{0, 1, 2}));  // at most the limit
  ring.drain([&](const TraceRecord& r) { drained.push_back(r.event.fields[0]); });
  EXPECT_EQ(drained, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_NE(ring.push(record), kDropped);  // room again
}

TEST(TraceRecorder, WritesEveryThreadsEventsInTimeOrderForTheCallingTask) {
  const std::string path = temp_path();
  TraceRecorder recorder;
  ASSERT_EQ(recorder.start(path), 0);
  EXPECT_EQ(recorder.start(path), -EBUSY);
  constexpr int kThreads = 4, kEach = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      // As Proc::ioctl names its caller: this process, and a made-up thread of it.
      core::trace::TaskScope task({getpid(), getpid()});
      for (int i = 0; i < kEach; ++i)
        core::trace::emit(TraceEventType::kTransactionReceived, t * kEach + i);
    });
  }
  for (auto& thread : threads) thread.join();
  TraceRecorder::Summary summary = recorder.stop();
  EXPECT_EQ(summary.written, std::uint64_t{kThreads * kEach});
  EXPECT_EQ(summary.dropped, 0u);
  core::trace::emit(TraceEventType::kTransactionReceived, 1);  // stopped: goes nowhere

  std::vector<std::string> lines = lines_of(path);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "# tracer: nop");
  EXPECT_EQ(lines.back(),
            "# cused: 2000 events written, 0 dropped (rings of 16384 events per "
            "daemon thread)");
  std::size_t events = 0;
  double last = 0;
  std::vector<bool> seen(kThreads * kEach);
  for (const std::string& line : lines) {
    if (line[0] == '#') continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, kLine)) << line;
    EXPECT_EQ(std::stoi(m[2]), getpid());
    EXPECT_EQ(m[3].str(), std::to_string(getpid()));
    double time = std::stod(m[5].str() + "." + m[6].str());
    EXPECT_GE(time, last) << line;
    last = time;
    EXPECT_EQ(m[7].str(), "binder_transaction_received");
    int id = std::stoi(m[8].str().substr(std::string("transaction=").size()));
    ASSERT_LT(id, kThreads * kEach);
    EXPECT_FALSE(seen[id]) << line;
    seen[id] = true;
    ++events;
  }
  EXPECT_EQ(events, std::size_t{kThreads * kEach});
  std::remove(path.c_str());
}

TEST(TraceRecorder, CountsWhatAFullRingDroppedPerEventInTheFile) {
  const std::string path = temp_path();
  TraceRecorder recorder(8);
  ASSERT_EQ(recorder.start(path), 0);
  // Far faster than the collector wakes: the 8 slots fill again and again before it drains.
  constexpr int kEvents = 100000;
  for (int i = 0; i < kEvents; ++i) core::trace::emit(TraceEventType::kReturn, 0x720c);
  TraceRecorder::Summary summary = recorder.stop();
  EXPECT_EQ(summary.written + summary.dropped, std::uint64_t{kEvents});
  EXPECT_GT(summary.dropped, 0u);
  EXPECT_EQ(summary.dropped_by_event[static_cast<std::size_t>(TraceEventType::kReturn)],
            summary.dropped);
  EXPECT_EQ(summary.path, path);
  std::vector<std::string> lines = lines_of(path);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines.back(), "# cused: " + std::to_string(summary.written) + " events written, " +
                              std::to_string(summary.dropped) +
                              " dropped (rings of 8 events per daemon thread)");
  // Before it: the drops per event, then the process of every line's thread group.
  EXPECT_EQ(lines[lines.size() - 3],
            "# cused: dropped per event: binder_return=" + std::to_string(summary.dropped));
  EXPECT_EQ(lines[lines.size() - 2].rfind("# cused: process " + std::to_string(getpid()) + " ", 0),
            0u);
  // No client task: the line names the daemon's thread and process.
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[lines.size() - 4], m, kLine));
  EXPECT_EQ(std::stoi(m[2]), gettid());
  EXPECT_EQ(m[3].str(), std::to_string(getpid()));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cused::host
