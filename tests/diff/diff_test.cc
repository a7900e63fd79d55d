// SPDX-License-Identifier: GPL-2.0-only
// The differential runner's own rules (issue 19, docs/reliability.md): where a step ends, how a
// delivered buffer is shown, how a state normalises (the deviation rules: deviations_test.cc).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/diff/generator.h"
#include "tests/diff/late_answer.h"
#include "tests/diff/proc_state.h"
#include "tests/diff/step_decoder.h"
#include "tests/diff/trace.h"
#include "tests/fuzz/script.h"

namespace cused::diff {
namespace {

TEST(StepSpans, EveryStepEndsWhereTheFuzzerStopsReadingIt) {
  fuzz::ScriptWriter w;
  w.open(0).context_mgr(0, 0);
  w.write_read(0, 0, 1, 4).free_raw(0x1234);  // op, slot, thread, mode, count, cmd, 0xff, u64
  w.write_read(3, 0, 1, 4).free_raw(0x1234);  // slot 3 never opened: its commands are not read
  auto spans = step_spans(w.bytes);
  ASSERT_GE(spans.size(), 4u);
  EXPECT_EQ(spans[0], std::make_pair(std::size_t{0}, std::size_t{4}));
  EXPECT_EQ(spans[1], std::make_pair(std::size_t{4}, std::size_t{7}));
  EXPECT_EQ(spans[2], std::make_pair(std::size_t{7}, std::size_t{7 + 5 + 10}));
  EXPECT_EQ(spans[3].second - spans[3].first, 5u);
}

// A generated script reads back as the steps the generator wrote: a byte it wrote for a step
// the fuzzer reads shorter (a dead slot's commands, a damage without a parameter) would be read
// as an op of its own, and those bytes are parcel data (0x41...) or arguments, out of range.
TEST(Generator, EveryStepReadsBackAsWritten) {
  for (std::uint64_t seed = 1; seed <= 300; seed++) {
    auto script = generate_script(seed, 60);
    for (auto [start, end] : step_spans(script)) {
      ASSERT_LT(script[start], static_cast<std::uint8_t>(fuzz::Op::kCount)) << "seed " << seed;
      if (end - start > 1) {
        ASSERT_LT(script[start + 1], fuzz::kSlots) << "seed " << seed;
      }
    }
  }
}

// Pointers into the receiver's buffer space become offsets, so two drivers that place the
// buffer at the same offset give the same line (S9.1).
TEST(Trace, ADeliveredBufferIsShownByItsOffsetAndContents) {
  std::vector<std::byte> space(4096);
  const char payload[] = "ABCDEFGH";
  std::memcpy(space.data() + 0x40, payload, 8);
  binder_transaction_data tr{};
  tr.code = 3;
  tr.data_size = 8;
  tr.data.ptr.buffer = reinterpret_cast<std::uint64_t>(space.data() + 0x40);
  tr.data.ptr.offsets = reinterpret_cast<std::uint64_t>(space.data() + 0x48);
  std::vector<std::byte> read(sizeof(std::uint32_t) + sizeof tr);
  std::uint32_t cmd = BR_TRANSACTION;
  std::memcpy(read.data(), &cmd, sizeof cmd);
  std::memcpy(read.data() + sizeof cmd, &tr, sizeof tr);
  binder_write_read bwr{};
  bwr.read_size = bwr.read_consumed = read.size();
  std::string line = render_write_read(0, bwr, read, {space.data(), space.size()});
  EXPECT_NE(line.find("data 8 @0x40 offsets 0 @0x48 [4142434445464748]"), std::string::npos)
      << line;
}

// S9.12: the kernel's binder/proc/PID (debugfs) and cused's binder_logs/proc/PID say the same of
// the same state once pids, tids, debug ids, kernel pointers and printing artefacts are gone.
TEST(ProcStates, KernelAndCusedTextsOfOneStateNormaliseAlike_S9_12) {
  Roles roles;
  roles.pids = {{100, "s0"}, {200, "s1"}};
  roles.tids = {{101, "s0.t0"}, {102, "s0.t1"}, {201, "s1.t0"}};
  const std::uint64_t base = 0x7f0000000000;
  const std::string kernel_s0 =
      "binder proc state:\nproc 100\ncontext binder\n"
      "  thread 102: l 00 need_return 0 tr 0\n"
      "  thread 101: l 11 need_return 0 tr 0\n"
      "    incoming transaction 57: ffff8881 from 200:201 to 100:101 code 1 flags 10 pri 0:120 r1 "
      "node 9 size 24:8 data 7f0000000040\n"
      "  node 9: u0000000000000000 c0000000000000000 hs 1 hw 1 ls 1 lw 1 is 1 iw 1 tr 1 proc 200\n"
      "  buffer 58: 7f0000000040 size 24:8:0 active\n";
  const std::string cused_s0 =
      "binder proc state:\nproc 100\ncontext binder\n  variant: alloc_lock=mutex\n"
      "  thread 101: l 11 need_return 0 tr 0\n"
      "    incoming transaction 3: 0000000000000000 from 200:201 to 100:101 code 1 flags 10 pri "
      "0:120 a0 r1 elapsed 4ms node 1 size 24:8 offset 40\n"
      "  thread 102: l 00 need_return 0 tr 0\n"
      "  node 1: u0000000000000000 c0000000000000000 hs 1 hw 1 ls 1 lw 1 is 1 iw 1 tr 1 proc 200\n"
      "  buffer 4: 40 size 24:8:0 active\n";
  const std::string kernel_s1 =
      "proc 200\ncontext binder\n  thread 201: l 00 need_return 0 tr 0\n"
      "    outgoing transaction 57: ffff8881 from 200:201 to 100:101 code 1 flags 10 pri 0:120 r1\n"
      "  ref 12: desc 1 node 9 s 1 w 1 d ffff888003\n";
  const std::string cused_s1 =
      "proc 200\ncontext binder\n  thread 201: l 00 need_return 0 tr 0\n"
      "    outgoing transaction 3: 0000000000000000 from 200:201 to 100:101 code 1 flags 10 pri "
      "0:120 a0 r1 elapsed 4ms\n"
      "  ref 2: desc 1 node 1 s 1 w 1 d 9c3a51e07b2d4410\n";
  auto kernel = normalise_proc_states({{"s0", base, kernel_s0}, {"s1", 0, kernel_s1}}, roles);
  auto cused = normalise_proc_states({{"s0", base, cused_s0}, {"s1", 0, cused_s1}}, roles);
  EXPECT_EQ(kernel, cused);
  const std::vector<std::string> expected = {
      "state s0:   thread s0.t0: l 11 need_return 0",
      "state s0:     incoming transaction from s1:s1.t0 to s0:s0.t0 code 1 flags 10 pri 0:120 r1 "
      "node s0:u0 size 24:8 @0x40",
      "state s0:   thread s0.t1: l 00 need_return 0",
      "state s0:   node u0 c0 hs 1 hw 1 ls 1 lw 1 is 1 iw 1 proc s1",
      "state s0:   buffer @0x40 size 24:8:0 active",
      "state s1:   thread s1.t0: l 00 need_return 0",
      "state s1:     outgoing transaction from s1:s1.t0 to s0:s0.t0 code 1 flags 10 pri 0:120 r1",
      "state s1:   ref desc 1 node s0:u0 s 1 w 1 d set",
  };
  EXPECT_EQ(kernel, expected);
}

// What the state says differently stays different: a ref count, a death registration.
TEST(ProcStates, ADifferentCountOrDeathStaysDifferent_S9_12) {
  Roles roles;
  roles.pids = {{200, "s1"}};
  auto text = [](const char* counts) {
    return std::string("proc 200\n  ref 2: desc 1 node 1 ") + counts + "\n";
  };
  auto states = [&](const char* counts) {
    return normalise_proc_states({{"s1", 0, text(counts)}}, roles);
  };
  EXPECT_NE(states("s 1 w 1 d 0000000000000000"), states("s 0 w 1 d 0000000000000000"));
  EXPECT_NE(states("s 1 w 1 d 0000000000000000"), states("s 1 w 1 d 00000000deadbeef"));
}

// Issue 48: a divergence a slower run does not show counts as timing only when its first
// difference is a late answer; anything else is "diverged, timing-dependent".
TEST(LateAnswer, AParkedCallTheOtherSideAnsweredIsTiming) {
  const Trace kernel = {"1 s0.t0: context_mgr ret 0",
                        "2 s0.t0: read ret 0 wc 0/0 rc 4/512: BR_NOOP; | ret 0 ee BR_OK 0"};
  const Trace cused = {kernel[0], "2 s0.t0: parked"};
  EXPECT_TRUE(late_answer(kernel, cused, compare(kernel, cused, "fuse")));
  EXPECT_TRUE(late_answer(cused, kernel, compare(cused, kernel, "fuse")));
  // Another thread parked, or another step.
  const Trace other_thread = {kernel[0], "2 s0.t1: parked"};
  EXPECT_FALSE(late_answer(kernel, other_thread, compare(kernel, other_thread, "fuse")));
  const Trace other_step = {kernel[0], "3 s0.t0: parked"};
  EXPECT_FALSE(late_answer(kernel, other_step, compare(kernel, other_step, "fuse")));
}

TEST(LateAnswer, TheSameLineAStepLaterIsTimingAnotherAnswerIsNot) {
  const Trace kernel = {
      "5 s0.t0: (call of step 2) read ret 0 wc 0/0 rc 4/512: BR_NOOP; | ret 0 "
      "ee BR_OK 0",
      "6 s1.t0: flush ret 0"};
  const Trace later = {"5 s1.t0: flush ret 0",
                       "6 s0.t0: (call of step 2) read ret 0 wc 0/0 rc 4/512: BR_NOOP; | ret 0 "
                       "ee BR_OK 0"};
  EXPECT_TRUE(late_answer(kernel, later, compare(kernel, later, "fuse")));
  // An answer that differs in what it says: a race, not a late answer.
  const Trace other = {
      "5 s0.t0: (call of step 2) read ret 0 wc 0/0 rc 8/512: BR_NOOP; "
      "BR_DEAD_REPLY; | ret 0 ee BR_OK 0",
      kernel[1]};
  EXPECT_FALSE(late_answer(kernel, other, compare(kernel, other, "fuse")));
  const Trace failed = {
      "5 s0.t0: (call of step 2) read ret EINTR wc 0/0 rc 0/512: | ret 0 ee "
      "BR_OK 0",
      kernel[1]};
  EXPECT_FALSE(late_answer(kernel, failed, compare(kernel, failed, "fuse")));
}

}  // namespace
}  // namespace cused::diff
