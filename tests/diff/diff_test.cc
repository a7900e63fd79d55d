// The differential runner's own rules (issue 19, docs/reliability.md): where a step ends, which
// documented deviation a diverging line is, and how a delivered buffer is shown.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/diff/deviations.h"
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

// S1.9: the node work a dying target's release withdraws is no deviation on either path since
// the FUSE path leaves a thread that dies with its process to the release (found-20261459).
TEST(Deviations, NodeWorkBeforeADeadReplyIsADivergence_S1_9) {
  const std::string kernel =
      "401 s1.t1: (call of step 18) write_read BC_TRANSACTION[obj] | ret 0 wc 68/68 rc 12/512: "
      "BR_NOOP; BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY; | ret 0 ee BR_OK 0";
  const std::string cused =
      "401 s1.t1: (call of step 18) write_read BC_TRANSACTION[obj] | ret 0 wc 68/68 rc 52/512: "
      "BR_NOOP; BR_INCREFS 0040; BR_ACQUIRE 0040; BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY; | "
      "ret 0 ee BR_OK 0";
  EXPECT_FALSE(known_deviation("fuse", kernel, cused));
  EXPECT_FALSE(known_deviation("run", kernel, cused));
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

}  // namespace
}  // namespace cused::diff
