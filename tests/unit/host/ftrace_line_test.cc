// SPDX-License-Identifier: GPL-2.0-only
// The trace text's reader (cused/host/ftrace_line.h) on the lines cused writes (ftrace_text.h) and
// on lines the kernel printed (kernel_binder_events.txt, read by ftrace_kernel_lines_test.cc):
// binder-ab --trace's lock summary and the differential tests' event comparison read traces
// through it.
#include "cused/host/ftrace_line.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "cused/host/ftrace_text.h"

namespace cused::host {
namespace {

// The line was read, as the task `comm`, `tid` of thread group `tgid` (0: none recorded).
void expect_task(const std::optional<FtraceLine>& line, const std::string& comm, pid_t tid,
                 pid_t tgid) {
  ASSERT_TRUE(line);
  EXPECT_EQ(line->comm, comm);
  EXPECT_EQ(line->tid, tid);
  EXPECT_EQ(line->tgid, tgid);
}

TEST(FtraceLine, ReadsTheTaskTheTimeTheEventAndItsFieldsByName) {
  auto line = parse_ftrace_line(
      " binderThroughpu-48213   (  48210) [001] ....  5123.456789: cused_lock_acquired: "
      "lock=alloc variant=mutex policy=barging wait_ns=48213");
  expect_task(line, "binderThroughpu", 48213, 48210);
  ASSERT_TRUE(line);
  EXPECT_DOUBLE_EQ(line->seconds, 5123.456789);
  EXPECT_EQ(line->event, "cused_lock_acquired");
  EXPECT_EQ(line->text, "lock=alloc variant=mutex policy=barging wait_ns=48213");
  EXPECT_EQ(line->field("variant"), "mutex");
  EXPECT_EQ(line->number("wait_ns"), 48213);
  EXPECT_FALSE(line->number("prio"));     // an older daemon's line: no prio=
  EXPECT_FALSE(line->number("variant"));  // not a number
}

TEST(FtraceLine, ACommWithSpacesAndDashesAndNoTgid) {
  auto line = parse_ftrace_line(
      "           a b-c-77      (-------) [012] .... 123456.789012: binder_transaction_received: "
      "transaction=2041");
  expect_task(line, "a b-c", 77, 0);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->number("transaction"), 2041);
  // The kernel's "==>" is no field, but stays in the text.
  auto arrow = parse_ftrace_line(
      "   servicemanager-580     (    580) [000] ....    42.000001: "
      "binder_transaction_node_to_ref: "
      "transaction=9 node=3 src_ptr=0x0000000000001000 ==> dest_ref=4 dest_desc=1");
  ASSERT_TRUE(arrow);
  EXPECT_EQ(arrow->fields.size(), 5u);
  EXPECT_EQ(arrow->number("dest_desc"), 1);
  EXPECT_NE(arrow->text.find(" ==> "), std::string::npos);
}

TEST(FtraceLine, TheKernelsLayoutWithoutTgidAndWithFiveFlags) {
  auto line = parse_ftrace_line(
      "  kworker/u8:1-38      [001] .....     9.100000: binder_ioctl_done: ret=0");
  expect_task(line, "kworker/u8:1", 38, 0);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->event, "binder_ioctl_done");
  EXPECT_EQ(line->number("ret"), 0);
}

TEST(FtraceLine, TheHeaderAndBlankLinesAreNoEvents) {
  EXPECT_FALSE(parse_ftrace_line("# tracer: nop"));
  for (std::string header_line; const char c : trace_header()) {
    if (c != '\n') {
      header_line += c;
      continue;
    }
    EXPECT_FALSE(parse_ftrace_line(header_line)) << header_line;
    header_line.clear();
  }
  EXPECT_FALSE(parse_ftrace_line(""));
  EXPECT_FALSE(parse_ftrace_line("cused: trace: 16513 events written, 0 dropped"));
}

// What the writer prints, the reader gives back: the same task, time and text.
TEST(FtraceLine, ReadsBackWhatTheWriterWrote) {
  core::TraceEvent event;
  event.type = core::TraceEventType::kWaitForWork;
  event.fields[0] = 1;
  event.fields[1] = 0;
  event.fields[2] = 1;
  event.time = std::chrono::steady_clock::time_point(std::chrono::microseconds(14421670567));
  std::string written = trace_line({"binder-diff", 210, 209, 3}, event);
  ASSERT_EQ(written.back(), '\n');
  written.pop_back();
  auto line = parse_ftrace_line(written);
  expect_task(line, "binder-diff", 210, 209);
  ASSERT_TRUE(line) << written;
  EXPECT_DOUBLE_EQ(line->seconds, 14421.670567);
  EXPECT_EQ(line->event, "binder_wait_for_work");
  EXPECT_EQ(line->text, trace_event_fields(event));
  EXPECT_EQ(line->number("thread_todo"), 1);
}

}  // namespace
}  // namespace cused::host
