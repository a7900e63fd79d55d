// The differential runner's own rules (issue 19, docs/reliability.md): where a step ends, which
// documented deviation a diverging line is, and how a delivered buffer is shown.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/diff/deviations.h"
#include "tests/diff/generator.h"
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

const std::string kSentFd =
    "12 s1.t0: write_read BC_TRANSACTION[fd] | ret 0 wc 68/68 rc 8/512: BR_NOOP; "
    "BR_TRANSACTION_COMPLETE; | ret 0 ee BR_OK 0";
const std::string kFailedFd =
    "12 s1.t0: write_read BC_TRANSACTION[fd] | ret 0 wc 68/68 rc 8/512: BR_NOOP; "
    "BR_FAILED_REPLY; | ret 0 ee BR_FAILED_REPLY -1";

// S5.3, docs/binderfs.md: fds cannot travel on the FUSE path, and nowhere else may they fail.
TEST(Deviations, AnFdThatFailsOnlyOnTheFusePathIsDocumented_S5_3) {
  auto known = known_deviation("fuse", kSentFd, kFailedFd);
  ASSERT_TRUE(known);
  EXPECT_EQ(known->name, "fds-on-fuse");
  EXPECT_FALSE(known_deviation("run", kSentFd, kFailedFd));
}

TEST(Deviations, AnFdCallThatParkedOnTheKernelAndFailedOnFuseIsDocumented_S5_3) {
  auto known = known_deviation("fuse", "12 s1.t0: parked", kFailedFd);
  ASSERT_TRUE(known);
  EXPECT_EQ(known->name, "fds-on-fuse");
}

// A caller's read of BR_DEAD_REPLY when the proc it called dies, without and with the node work
// for the ref the dying proc held on the caller's node (S1.9).
const std::string kDeadReply =
    "401 s1.t0: (call of step 36) read ret 0 wc 0/0 rc 12/512: BR_NOOP; "
    "BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY; | ret 0 ee BR_OK 0";
const std::string kNodeWorkThenDeadReply =
    "401 s1.t0: (call of step 36) read ret 0 wc 0/0 rc 52/512: BR_NOOP; BR_INCREFS 0020; "
    "BR_ACQUIRE 0020; BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY; | ret 0 ee BR_OK 0";

// cused never tells the caller to take that ref: its callers read after the whole release, and
// since the FUSE path leaves a thread that dies with its process to the release (found-20261459)
// node work there is a divergence on either path.
TEST(Deviations, NodeWorkBeforeADeadReplyOnCusedIsADivergence_S1_9) {
  EXPECT_FALSE(known_deviation("fuse", kDeadReply, kNodeWorkThenDeadReply));
  EXPECT_FALSE(known_deviation("run", kDeadReply, kNodeWorkThenDeadReply));
}

// The kernel's caller reads while the release of the proc it called goes on, so it may read
// before the refs are dropped (freeze-3134) or after (found-20261459, where less of the release
// came after the wake).
TEST(Deviations, NodeWorkACallerReadsDuringTheKernelsReleaseIsTheReleaseRace_S1_9) {
  for (const char* path : {"fuse", "run"}) {
    auto known = known_deviation(path, kNodeWorkThenDeadReply, kDeadReply);
    ASSERT_TRUE(known);
    EXPECT_EQ(known->name, "release-race");
  }
  // Only that pair: another difference in the same line is still a divergence.
  std::string other = kDeadReply;
  other.replace(other.find("ee BR_OK 0"), 10, "ee BR_DEAD_REPLY 0");
  EXPECT_FALSE(known_deviation("fuse", kNodeWorkThenDeadReply, other));
  // Work for two different nodes is not the one ref the release takes back.
  std::string two = kNodeWorkThenDeadReply;
  two.replace(two.find("BR_ACQUIRE 0020"), 15, "BR_ACQUIRE 0030");
  EXPECT_FALSE(known_deviation("fuse", two, kDeadReply));
}

// S5.3, S4.7: a reply with an fd that FUSE refuses fails on its caller's side; only after such
// a reply is the caller's EPERM documented (found by the CI campaign, seed 1796171906).
TEST(Deviations, TheCallerOfARefusedFdReplyFailsWithEpermOnFuse_S5_3) {
  const std::string kernel =
      "45 s0.t2: (call of step 21) write_read BC_TRANSACTION_SG[] | ret 0 wc 76/76 rc 4/11: "
      "BR_NOOP; | ret 0 ee BR_OK 0";
  std::string cused = kernel;
  cused.replace(cused.find("ee BR_OK 0"), 10, "ee BR_FAILED_REPLY -1");
  const std::vector<std::string> reply_with_fd = {
      "45 s1.t1: write_read BC_REPLY[fd] | ret 0 wc 68/68 rc 0/0: | ret 0 ee BR_OK 0"};
  auto known = known_deviation("fuse", kernel, cused, reply_with_fd);
  ASSERT_TRUE(known);
  EXPECT_EQ(known->name, "fds-on-fuse");
  EXPECT_FALSE(known_deviation("run", kernel, cused, reply_with_fd));
  const std::vector<std::string> reply_without_fd = {
      "45 s1.t1: write_read BC_REPLY[obj] | ret 0 wc 68/68 rc 0/0: | ret 0 ee BR_OK 0"};
  EXPECT_FALSE(known_deviation("fuse", kernel, cused, reply_without_fd));
  EXPECT_FALSE(known_deviation("fuse", kernel, cused));
}

TEST(Deviations, AFailureWithoutFdsIsADivergence) {
  std::string sent = kSentFd, failed = kFailedFd;
  sent.replace(sent.find("[fd]"), 4, "[obj]");
  failed.replace(failed.find("[fd]"), 4, "[obj]");
  EXPECT_FALSE(known_deviation("fuse", sent, failed));
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

// S11.6, S12.7: a buffer whose transaction was dropped undelivered is kept by the kernel (with
// its node's local strong ref) and freed by cused: the state lines say so, on both paths, and a
// node that differs in anything else is still a divergence.
TEST(Deviations, AKeptUndeliveredBufferIsTheRustDriversDeviation_S11_6) {
  const std::string kept = "401 state s2:   buffer @0x0 size 0:0:0 delivered";
  for (const char* path : {"fuse", "run"}) {
    auto known = known_deviation(path, kept, "401 s0: killed");
    ASSERT_TRUE(known) << path;
    EXPECT_EQ(known->name, "undelivered-buffer-freed");
    EXPECT_TRUE(known_deviation(path, "401 state s0:   node u0 c0 hs 1 hw 1 ls 2 lw 1 is 0 iw 0",
                                "401 state s0:   node u0 c0 hs 1 hw 1 ls 1 lw 1 is 0 iw 0"));
    EXPECT_FALSE(known_deviation(path, "401 state s0:   node u0 c0 hs 1 hw 1 ls 2 lw 1 is 0 iw 0",
                                 "401 state s0:   node u0 c0 hs 1 hw 1 ls 2 lw 0 is 0 iw 0"));
    EXPECT_FALSE(known_deviation(path, "401 s0: killed", kept));
  }
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

}  // namespace
}  // namespace cused::diff
