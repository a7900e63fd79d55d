// SPDX-License-Identifier: GPL-2.0-only
// The trace-event comparison (docs/reliability.md, "Trace events"; issue 32 point 4): lines the
// kernel printed in the guest (tests/diff/record-kernel-traces --events) normalised to script
// roles and first-appearance numbers, compared task by task, and docs/tracing.md's one
// documented event difference accepted in its case only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/diff/event_compare.h"
#include "tests/diff/event_lines.h"

namespace cused::diff {
namespace {

using Lines = std::vector<std::string>;

// seed-call_reply's slots 0 and 2 in the guest's run: proc 199 (its thread 0 is 200) and proc
// 209 (its thread 0 is 210).
Roles call_reply_roles() {
  Roles roles;
  roles.pids = {{199, "s0"}, {209, "s2"}};
  roles.tids = {{199, "s0.main"}, {200, "s0.t0"}, {209, "s2.main"}, {210, "s2.t0"}};
  return roles;
}

// What the kernel printed for s0.t0's BC_REPLY to s2.t0 and s2.t0's read of it (seed-call_reply).
const Lines& kernel_reply_lines() {
  static const Lines lines{
      "     binder-diff-200     [001] .....     8.959263: binder_command: cmd=0x40406301 BC_REPLY",
      "     binder-diff-200     [001] .....     8.959285: binder_transaction: transaction=24 "
      "dest_node=0 dest_proc=209 dest_thread=210 reply=1 flags=0x0 code=0x0",
      "     binder-diff-200     [001] ...1.     8.959291: binder_update_page_range: proc=209 "
      "allocate=1 offset=0 size=4096",
      "     binder-diff-200     [001] .....     8.959339: binder_transaction_alloc_buf: "
      "transaction=24 data_size=24 offsets_size=8 extra_buffers_size=0",
      "     binder-diff-200     [001] .....     8.959455: binder_transaction_ref_to_ref: "
      "transaction=24 node=21 src_ref=22 src_desc=1 ==> dest_ref=25 dest_desc=1",
      "     binder-diff-200     [001] .....     8.959476: binder_txn_latency_free: transaction=23 "
      "from 0:0 to 199:200 flags=0x2 code=0x0",
      "     binder-diff-210     [000] .....     8.961168: binder_ioctl: cmd=0xc0306201 "
      "arg=0x7f479c92ab80",
      "     binder-diff-210     [000] .....     8.961190: binder_transaction_received: "
      "transaction=24",
      "     binder-diff-210     [000] .....     8.961197: binder_txn_latency_free: transaction=24 "
      "from 0:0 to 209:210 flags=0x0 code=0x0",
  };
  return lines;
}

TEST(EventLines, KernelLinesBecomeRolesAndFirstAppearanceNumbersPerTask) {
  EXPECT_EQ(normalise_events(kernel_reply_lines(), call_reply_roles()),
            (Lines{
                "s0.t0 binder_command: cmd=0x40406301 BC_REPLY",
                "s0.t0 binder_transaction: transaction=t1 dest_node=0 dest_proc=s2 "
                "dest_thread=s2.t0 reply=1 flags=0x0 code=0x0",
                "s0.t0 binder_update_page_range: proc=s2 allocate=1 offset=0 size=4096",
                "s0.t0 binder_transaction_alloc_buf: transaction=t1 data_size=24 offsets_size=8 "
                "extra_buffers_size=0",
                "s0.t0 binder_transaction_ref_to_ref: transaction=t1 node=n1 src_ref=r1 "
                "src_desc=1 ==> dest_ref=r2 dest_desc=1",
                // transaction 23 is s0.t0's second id; the numbering is the task's own.
                "s0.t0 binder_txn_latency_free: transaction=t2 from 0:0 to s0:s0.t0 flags=0x2 "
                "code=0x0",
                "s2.t0 binder_ioctl: cmd=0xc0306201 arg=addr",
                "s2.t0 binder_transaction_received: transaction=t1",
                "s2.t0 binder_txn_latency_free: transaction=t1 from 0:0 to s2:s2.t0 flags=0x0 "
                "code=0x0",
            }));
}

TEST(EventLines, CusedLinesWithTheTgidColumnReadAsTheKernels) {
  // cused writes options/record-tgid's layout and four flag columns (docs/tracing.md); the
  // kernel's line above has no tgid column and five flags. Both are s2.t0's same event.
  EXPECT_EQ(normalise_events({"     binder-diff-210     (    209) [000] .... 14421.670567: "
                              "binder_ioctl: cmd=0xc0306201 arg=0x7f479c92ab80",
                              kernel_reply_lines()[6]},
                             call_reply_roles()),
            (Lines{"s2.t0 binder_ioctl: cmd=0xc0306201 arg=addr",
                   "s2.t0 binder_ioctl: cmd=0xc0306201 arg=addr"}));
}

TEST(EventLines, HeaderCommentsAndEventsNotComparedAreLeftOut) {
  Roles roles = call_reply_roles();
  EXPECT_TRUE(normalise_events({"# tracer: nop", "#           TASK-PID     CPU#  |||||",
                                "# cused: 12 events written, 0 dropped"},
                               roles)
                  .empty());
  // docs/tracing.md "Not emitted", and cused's own events: not compared.
  for (const char* name :
       {"cused_lock_acquired", "binder_unmap_kernel_start", "binder_unmap_kernel_end",
        "binder_set_priority", "binder_lock", "binder_locked", "binder_unlock"})
    EXPECT_FALSE(compared_event(name)) << name;
  for (const char* name : {"binder_unmap_user_start", "binder_ioctl", "binder_free_lru_end"})
    EXPECT_TRUE(compared_event(name)) << name;
}

TEST(EventLines, ATaskNoSlotOwnsIsOther) {
  EXPECT_EQ(normalise_events({"  kworker/u8:1-38      [001] .....     9.100000: "
                              "binder_transaction_buffer_release: transaction=24 data_size=24 "
                              "offsets_size=8 extra_buffers_size=0"},
                             call_reply_roles()),
            Lines{"other binder_transaction_buffer_release: transaction=t1 data_size=24 "
                  "offsets_size=8 extra_buffers_size=0"});
}

TEST(EventCompare, TasksInterleavedDifferentlyAreTheSame) {
  Lines kernel{"s1.t0 binder_ioctl: cmd=0x1 arg=a1", "s2.t0 binder_ioctl: cmd=0x2 arg=a1",
               "s1.t0 binder_ioctl_done: ret=0", "s2.t0 binder_ioctl_done: ret=0"};
  Lines cused{"s2.t0 binder_ioctl: cmd=0x2 arg=a1", "s2.t0 binder_ioctl_done: ret=0",
              "s1.t0 binder_ioctl: cmd=0x1 arg=a1", "s1.t0 binder_ioctl_done: ret=0"};
  auto v = compare_events(kernel, cused);
  EXPECT_FALSE(v.diverged);
  EXPECT_EQ(v.tasks, 2u);
  EXPECT_EQ(v.compared, 4u);
}

TEST(EventCompare, OneTasksOrderSwappedDiverges) {
  Lines kernel{"s1.t0 binder_return: cmd=0x7206 BR_TRANSACTION_COMPLETE",
               "s1.t0 binder_read_done: ret=0"};
  Lines cused{kernel[1], kernel[0]};
  auto v = compare_events(kernel, cused);
  EXPECT_TRUE(v.diverged);
  EXPECT_EQ(v.task, "s1.t0");
  EXPECT_EQ(v.event, 1u);
}

TEST(EventCompare, AFieldOrAMissingEventDiverges) {
  Lines kernel{"s1.t0 binder_ioctl: cmd=0x1 arg=a1", "s1.t0 binder_ioctl_done: ret=0"};
  auto field = compare_events(kernel, {kernel[0], "s1.t0 binder_ioctl_done: ret=-22"});
  EXPECT_TRUE(field.diverged);
  EXPECT_EQ(field.event, 2u);
  auto missing = compare_events(kernel, {kernel[0]});
  EXPECT_TRUE(missing.diverged);
  EXPECT_EQ(missing.cused, "(end)");
  auto extra = compare_events(kernel, {kernel[0], kernel[1], "s1.t0 binder_ioctl_done: ret=0"});
  EXPECT_TRUE(extra.diverged);
  EXPECT_EQ(extra.kernel, "(end)");
  // A task only one side has.
  EXPECT_TRUE(compare_events(kernel, {kernel[0], kernel[1], "s2.t0 binder_ioctl: cmd=0x1 arg=a1"})
                  .diverged);
}

TEST(EventCompare, EventsOfNoScriptTaskAreCountedNotCompared) {
  Lines kernel{"s1.t0 binder_ioctl: cmd=0x1 arg=a1",
               "other binder_transaction_buffer_release: transaction=t1 data_size=0 "
               "offsets_size=0 extra_buffers_size=0"};
  auto v = compare_events(kernel, {kernel[0]});
  EXPECT_FALSE(v.diverged);
  EXPECT_EQ(v.not_compared, 1u);
  EXPECT_EQ(v.compared, 1u);
}

std::string page(const char* edge, int index, const char* proc = "s0") {
  return std::string("s1.t0 binder_alloc_page_") + edge + ": proc=" + proc +
         " page_index=" + std::to_string(index);
}

// The comparison accepts `cused` against `kernel` with exactly the one documented deviation,
// having compared `compared` kernel events.
void expect_one_documented(const Lines& kernel, const Lines& cused, const std::string& documented,
                           std::size_t compared) {
  auto v = compare_events(kernel, cused);
  EXPECT_FALSE(v.diverged) << v.kernel << " / " << v.cused;
  ASSERT_EQ(v.documented.size(), 1u);
  EXPECT_EQ(v.documented[0], documented);
  EXPECT_EQ(v.compared, compared);
}

// docs/tracing.md "Several pages installed at once": the kernel's start/end pairs, cused's
// starts then ends, for the same pages in the same order.
TEST(EventDeviations, PagesInstalledAtOnceIsDocumented) {
  Lines kernel{page("start", 0), page("end", 0), page("start", 1), page("end", 1),
               "s1.t0 binder_transaction_alloc_buf: transaction=t1 data_size=8000 "
               "offsets_size=0 extra_buffers_size=0"};
  Lines cused{page("start", 0), page("start", 1), page("end", 0), page("end", 1), kernel[4]};
  expect_one_documented(kernel, cused, "pages-installed-at-once: s1.t0, event 2", 5);
}

TEST(EventDeviations, PagesInstalledAtOnceRejectsNearMisses) {
  Lines kernel{page("start", 0), page("end", 0), page("start", 1), page("end", 1)};
  auto diverges = [&](const Lines& k, const Lines& c) { return compare_events(k, c).diverged; };
  // Ends in another order than the starts.
  EXPECT_TRUE(
      diverges(kernel, {page("start", 0), page("start", 1), page("end", 1), page("end", 0)}));
  // Another page than the kernel's.
  EXPECT_TRUE(
      diverges(kernel, {page("start", 0), page("start", 2), page("end", 0), page("end", 2)}));
  // Another proc's pages.
  EXPECT_TRUE(diverges(kernel, {page("start", 0, "s0"), page("start", 1, "s2"),
                                page("end", 0, "s0"), page("end", 1, "s2")}));
  // The kernel's pair is not of one page.
  EXPECT_TRUE(diverges({page("start", 0), page("end", 0), page("start", 2), page("end", 1)},
                       {page("start", 0), page("start", 1), page("end", 0), page("end", 1)}));
  // One end missing.
  EXPECT_TRUE(diverges(kernel, {page("start", 0), page("start", 1), page("end", 0)}));
  // The kernel has something between its pairs.
  Lines between{page("start", 0), page("end", 0),
                "s1.t0 binder_alloc_lru_start: proc=s0 page_index=1", page("start", 1),
                page("end", 1)};
  EXPECT_TRUE(
      diverges(between, {page("start", 0), page("start", 1), page("end", 0), page("end", 1)}));
  // The kernel's own order on cused's side is not a deviation, it is the same.
  EXPECT_TRUE(compare_events(kernel, kernel).documented.empty());
  // An end before any start (the kernel's pairs, cused's ends first).
  EXPECT_TRUE(
      diverges(kernel, {page("end", 0), page("end", 1), page("start", 0), page("start", 1)}));
}

std::string range(int allocate, int offset, int size, const char* proc = "s0") {
  return std::string("binder_update_page_range: proc=") + proc +
         " allocate=" + std::to_string(allocate) + " offset=" + std::to_string(offset) +
         " size=" + std::to_string(size);
}

std::string lru(const char* what, int index, const char* proc = "s0") {
  return std::string("binder_") + what + ": proc=" + proc + " page_index=" + std::to_string(index);
}

Lines task(const Lines& events) {
  Lines out;
  for (const auto& e : events) out.push_back("s1.t0 " + e);
  return out;
}

// docs/tracing.md "Page ranges": the kernel's ranges of a buffer's pages (its own whole pages,
// then each edge page a merge frees) against cused's one range of the buffer's pages, with the
// same pages taken from or put on the LRU.
TEST(EventDeviations, PageRangesAreDocumented) {
  // A free: the buffer's own whole pages (none), then the page its merge with the free rest
  // leaves unused (seed-call_reply in the guest).
  Lines kernel = task({range(0, 0, 0), range(0, 0, 4096), lru("free_lru_start", 0),
                       lru("free_lru_end", 0), "binder_write_done: ret=0"});
  Lines cused = task({range(0, 0, 4096), lru("free_lru_start", 0), lru("free_lru_end", 0),
                      "binder_write_done: ret=0"});
  expect_one_documented(kernel, cused, "page-ranges: s1.t0, event 1", 5);
  // An allocation within a page the buffer shares: the kernel's range is empty.
  EXPECT_FALSE(compare_events(task({range(1, 4096, 0), "binder_write_done: ret=0"}),
                              task({range(1, 0, 4096), "binder_write_done: ret=0"}))
                   .diverged);
}

TEST(EventDeviations, PageRangesRejectNearMisses) {
  Lines kernel =
      task({range(0, 0, 0), range(0, 0, 4096), lru("free_lru_start", 0), lru("free_lru_end", 0)});
  auto diverges = [&](const Lines& c) { return compare_events(kernel, task(c)).diverged; };
  // Another page put on the LRU, or one more, or none.
  EXPECT_TRUE(diverges({range(0, 0, 8192), lru("free_lru_start", 1), lru("free_lru_end", 1)}));
  EXPECT_TRUE(diverges({range(0, 0, 8192), lru("free_lru_start", 0), lru("free_lru_end", 0),
                        lru("free_lru_start", 1), lru("free_lru_end", 1)}));
  EXPECT_TRUE(diverges({range(0, 0, 4096)}));
  // The other direction, or another proc's range.
  EXPECT_TRUE(diverges({range(1, 0, 4096), lru("free_lru_start", 0), lru("free_lru_end", 0)}));
  EXPECT_TRUE(diverges(
      {range(0, 0, 4096, "s2"), lru("free_lru_start", 0, "s2"), lru("free_lru_end", 0, "s2")}));
  // A kernel range outside cused's.
  EXPECT_TRUE(
      compare_events(task({range(0, 8192, 4096), lru("free_lru_start", 2), lru("free_lru_end", 2)}),
                     task({range(0, 0, 4096), lru("free_lru_start", 2), lru("free_lru_end", 2)}))
          .diverged);
  // Not a range on cused's side at all.
  EXPECT_TRUE(diverges({lru("free_lru_start", 0), lru("free_lru_end", 0)}));
  // Issue 48: the kernel's range empty (a buffer within one page), cused's the whole space, or
  // two pages past it.
  Lines empty = task({range(1, 4096, 0), "binder_write_done: ret=0"});
  EXPECT_TRUE(
      compare_events(empty, task({range(1, 0, 1040384), "binder_write_done: ret=0"})).diverged);
  EXPECT_TRUE(
      compare_events(empty, task({range(1, 0, 12288), "binder_write_done: ret=0"})).diverged);
  EXPECT_TRUE(compare_events(task({range(1, 0, 0), "binder_write_done: ret=0"}),
                             task({range(1, 0, 1040384), "binder_write_done: ret=0"}))
                  .diverged);
}

// docs/tracing.md "A woken read that is then interrupted" (gen-151): cused's parked read, woken
// by work that gave it nothing and then interrupted, waits twice; the kernel's once.
TEST(EventDeviations, WokenReadInterruptedIsDocumented) {
  const std::string wait = "binder_wait_for_work: proc_work=1 transaction_stack=0 thread_todo=0";
  Lines kernel = task(
      {"binder_write_done: ret=0", wait, "binder_read_done: ret=-4", "binder_ioctl_done: ret=-4"});
  Lines cused = task({"binder_write_done: ret=0", wait, wait, "binder_read_done: ret=-4",
                      "binder_ioctl_done: ret=-4"});
  expect_one_documented(kernel, cused, "woken-read-interrupted: s1.t0, event 3", 4);
}

TEST(EventDeviations, WokenReadInterruptedRejectsNearMisses) {
  const std::string wait = "binder_wait_for_work: proc_work=1 transaction_stack=0 thread_todo=0";
  const std::string other_wait =
      "binder_wait_for_work: proc_work=1 transaction_stack=0 thread_todo=1";
  Lines kernel = task({wait, "binder_read_done: ret=-4"});
  auto diverges = [&](const Lines& k, const Lines& c) {
    return compare_events(task(k), task(c)).diverged;
  };
  // The repeat has other counts than the first wait.
  EXPECT_TRUE(
      diverges({wait, "binder_read_done: ret=-4"}, {wait, other_wait, "binder_read_done: ret=-4"}));
  // The read then returned something, or failed otherwise: not an interrupted read.
  EXPECT_TRUE(diverges({wait, "binder_read_done: ret=0"}, {wait, wait, "binder_read_done: ret=0"}));
  EXPECT_TRUE(
      diverges({wait, "binder_read_done: ret=-11"}, {wait, wait, "binder_read_done: ret=-11"}));
  // Two repeats.
  EXPECT_TRUE(
      diverges({wait, "binder_read_done: ret=-4"}, {wait, wait, wait, "binder_read_done: ret=-4"}));
  // The kernel's read went on after its wait: cused's repeat is not this case.
  EXPECT_TRUE(diverges({wait, "binder_return: cmd=0x7206 BR_NOOP", "binder_read_done: ret=-4"},
                       {wait, wait, "binder_read_done: ret=-4"}));
  // A repeated event that is not a wait.
  EXPECT_TRUE(diverges(
      {"binder_write_done: ret=0", "binder_read_done: ret=-4"},
      {"binder_write_done: ret=0", "binder_write_done: ret=0", "binder_read_done: ret=-4"}));
  // The kernel's own sequence on cused's side is the same, not a deviation.
  EXPECT_TRUE(compare_events(kernel, kernel).documented.empty());
}

}  // namespace
}  // namespace cused::diff
