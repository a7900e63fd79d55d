// SPDX-License-Identifier: GPL-2.0-only
// docs/binderfs.md's deviation rules (tests/diff/deviations.cc) accept their documented case
// and nothing near it (issues 34 and 48): each rule fed the made-up lines a reviewer would try,
// the issue-48 findings each a case of their own. Every one-line change of every corpus trace is
// tests/diff/mutations.cc's (the meson test diff-mutations).
#include "tests/diff/deviations.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/diff/compare.h"
#include "tests/diff/trace_line.h"

namespace cused::diff {
namespace {

namespace fs = std::filesystem;

// The deviation compare() finds where `cused` (otherwise `kernel`) differs, if any.
std::optional<std::string> documented(const std::string& path, const Trace& kernel,
                                      const Trace& cused) {
  Verdict v = compare(kernel, cused, path);
  if (v.kind != Verdict::kDocumented) return std::nullopt;
  return v.documented.front().deviation;
}

Trace with(Trace trace, std::size_t at, const std::string& line) {
  trace[at] = line;
  return trace;
}

Trace without(Trace trace, std::size_t at) {
  trace.erase(trace.begin() + static_cast<long>(at));
  return trace;
}

Trace read_trace(const fs::path& path) {
  Trace lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

fs::path corpus() {
  const char* dir = std::getenv("DIFF_CORPUS");
  return dir ? dir : "tests/diff/corpus";
}

TEST(TraceLine, AWriteReadReadsBackIntoItsParts) {
  auto line = parse_trace_line(
      "56 s1.t2: write_read BC_FREE_BUFFER BC_REPLY[obj,fd] | ret 0 wc 80/80 rc 8/512: BR_NOOP; "
      "BR_FAILED_REPLY; | ret 0 ee BR_FAILED_REPLY -71");
  EXPECT_EQ(line.kind, TraceLine::Kind::kAnswer);
  EXPECT_EQ(line.thread, "s1.t2");
  EXPECT_EQ(line.slot, "s1");
  ASSERT_EQ(line.sent.size(), 2u);
  EXPECT_EQ(line.sent[1].name, "BC_REPLY");
  EXPECT_EQ(line.sent[1].objects, (std::vector<std::string>{"obj", "fd"}));
  EXPECT_EQ(line.first_fd_command(), 1u);
  EXPECT_EQ(line.bytes_through(1), 80u);  // BC_FREE_BUFFER 12, BC_REPLY 68
  EXPECT_EQ(line.commands_consumed(), 2u);
  EXPECT_EQ(line.write_consumed, 80u);
  EXPECT_EQ(line.read_size, 512u);
  EXPECT_EQ(line.returns, (std::vector<std::string>{"BR_NOOP", "BR_FAILED_REPLY"}));
  EXPECT_TRUE(line.failed_with("BR_FAILED_REPLY", "-71"));
  auto late = parse_trace_line(
      "48 s0.t2: (call of step 33) read ret 0 wc 0/0 rc 4/13: BR_NOOP; "
      "| ret 0 ee BR_OK 0");
  EXPECT_EQ(late.call_of, "33");
  EXPECT_EQ(late.op, "read");
  auto state = parse_trace_line("401 state s0:   buffer @0x10 size 40:8:0 delivered");
  EXPECT_EQ(state.kind, TraceLine::Kind::kState);
  EXPECT_EQ(state.rest, "   buffer @0x10 size 40:8:0 delivered");
}

// A command after a failing one is not read: coverage counts only what was consumed (S0.3).
TEST(TraceLine, OnlyTheCommandsWithinWriteConsumedCount) {
  auto line = parse_trace_line(
      "9 s0.t0: write_read BC_TRANSACTION[] BC_CLEAR_FREEZE_NOTIFICATION | ret 0 wc 68/84 rc "
      "0/0: | ret 0 ee BR_FAILED_REPLY -22");
  EXPECT_EQ(line.commands_consumed(), 1u);
}

// ---- fds-on-fuse (S5.3, S5.4) ----

const Trace kFdSent = {
    "1 s0: open space 1040384 nonblock false: open ret 0 map 0",
    "2 s0.t0: context_mgr ret 0",
    "3 s1: open space 1040384 nonblock false: open ret 0 map 0",
    "4 s1.t0: write_read BC_TRANSACTION[fd] | ret 0 wc 68/68 rc 8/512: BR_NOOP; "
    "BR_TRANSACTION_COMPLETE; | ret 0 ee BR_OK 0",
};
const std::string kFdRefused =
    "4 s1.t0: write_read BC_TRANSACTION[fd] | ret 0 wc 68/68 rc 8/512: BR_NOOP; "
    "BR_FAILED_REPLY; | ret 0 ee BR_FAILED_REPLY -1";

TEST(FdsOnFuse, AnFdTheKernelSentAndFuseRefusedIsDocumented_S5_3) {
  EXPECT_EQ(documented("fuse", kFdSent, with(kFdSent, 3, kFdRefused)), "fds-on-fuse");
  EXPECT_EQ(documented("run", kFdSent, with(kFdSent, 3, kFdRefused)), std::nullopt);
  Trace parked = with(kFdSent, 3, "4 s1.t0: parked");
  EXPECT_EQ(documented("fuse", parked, with(kFdSent, 3, kFdRefused)), "fds-on-fuse");
  // A sync call's completion can come with a later read (freeze-3108, step 48).
  const std::string small_read =
      "4 s1.t0: write_read BC_TRANSACTION[fd] | ret 0 wc 68/68 rc "
      "4/13: BR_NOOP; | ret 0 ee ";
  Trace sent_no_completion = with(kFdSent, 3, small_read + "BR_OK 0");
  EXPECT_EQ(
      documented("fuse", sent_no_completion, with(kFdSent, 3, small_read + "BR_FAILED_REPLY -1")),
      "fds-on-fuse");
}

TEST(FdsOnFuse, AFailureWithoutAnFdOrWithAnotherErrnoOrThreadIsADivergence_S5_3) {
  auto sent_obj = [](std::string line) { return line.replace(line.find("[fd]"), 4, "[obj]"); };
  Trace kernel = with(kFdSent, 3, sent_obj(kFdSent[3]));
  EXPECT_EQ(documented("fuse", kernel, with(kernel, 3, sent_obj(kFdRefused))), std::nullopt);
  std::string efault = kFdRefused;
  efault.replace(efault.rfind("-1"), 2, "-14");
  EXPECT_EQ(documented("fuse", kFdSent, with(kFdSent, 3, efault)), std::nullopt);
  std::string other_thread = kFdRefused;
  other_thread.replace(0, 7, "4 s1.t1");
  EXPECT_EQ(documented("fuse", kFdSent, with(kFdSent, 3, other_thread)), std::nullopt);
  // cused said it read more than the refused command.
  std::string consumed_more = kFdRefused;
  consumed_more.replace(consumed_more.find("wc 68/68"), 8, "wc 80/80");
  EXPECT_EQ(documented("fuse", kFdSent, with(kFdSent, 3, consumed_more)), std::nullopt);
  // The kernel's line a state line, or a dead reply: not the fd's case.
  Trace state = with(kFdSent, 3, "4 state s0:   node u0 c0 hs 1 hw 1 ls 1 lw 1 is 0 iw 0");
  EXPECT_EQ(documented("fuse", state, with(kFdSent, 3, kFdRefused)), std::nullopt);
  Trace dead = with(kFdSent, 3,
                    "4 s1.t0: write_read BC_TRANSACTION[fd] | ret 0 wc 68/68 rc "
                    "8/512: BR_NOOP; BR_DEAD_REPLY; | ret 0 ee BR_DEAD_REPLY 0");
  EXPECT_EQ(documented("fuse", dead, with(kFdSent, 3, kFdRefused)), std::nullopt);
}

// `line` with the last `from` in it replaced by `to`.
std::string replaced(std::string line, const std::string& from, const std::string& to) {
  return line.replace(line.rfind(from), from.size(), to);
}

// How the rules class the kernel's `kernel_line` against cused's `cused_line` at one step of
// kFdSent.
std::optional<std::string> fd_step_documented(const std::string& kernel_line,
                                              const std::string& cused_line) {
  Trace kernel = with(kFdSent, 3, kernel_line);
  return documented("fuse", kernel, with(kernel, 3, cused_line));
}

// gen-219: the kernel took the fd and failed with EINVAL at an object after it, which FUSE
// never reaches; only that: fd first, EINVAL, both stopped after the command.
TEST(FdsOnFuse, TheKernelsEinvalAtAnObjectAfterTheFdIsDocumented_S5_3) {
  const std::string kernel_einval =
      "4 s1.t0: write_read BC_TRANSACTION[fd,obj,ptr] | ret 0 wc 68/68 rc 4/12: BR_NOOP; | ret "
      "0 ee BR_FAILED_REPLY -22";
  std::string cused = replaced(kernel_einval, "-22", "-1");
  EXPECT_EQ(fd_step_documented(kernel_einval, cused), "fds-on-fuse");
  auto sent = [](const std::string& line, const char* objects) {
    return replaced(line, "[fd,obj,ptr]", objects);
  };
  // The fd last: the kernel's EINVAL came before it, cused must give it too.
  EXPECT_EQ(fd_step_documented(sent(kernel_einval, "[obj,ptr,fd]"), sent(cused, "[obj,ptr,fd]")),
            std::nullopt);
  // The fd alone: EINVAL is the fd object's own.
  EXPECT_EQ(fd_step_documented(sent(kernel_einval, "[fd]"), sent(cused, "[fd]")), std::nullopt);
  // Another errno on the kernel (EPROTO, the reply's target gone).
  EXPECT_EQ(fd_step_documented(replaced(kernel_einval, "-22", "-71"), cused), std::nullopt);
}

// The kernel found an fd bad (EBADF, which only fd translation gives): cused refused the fds
// where they stand; the same line otherwise, and only EBADF (seed 1796282348 in the guest).
TEST(FdsOnFuse, TheKernelsEbadfAtAnFdIsDocumented_S5_3) {
  const std::string kernel_ebadf =
      "4 s1.t0: write_read BC_TRANSACTION_SG[fd,ptr] | ret 0 wc 76/76 rc 0/0: | ret 0 ee "
      "BR_FAILED_REPLY -9";
  std::string cused = replaced(kernel_ebadf, "-9", "-1");
  EXPECT_EQ(fd_step_documented(kernel_ebadf, cused), "fds-on-fuse");
  EXPECT_EQ(fd_step_documented(replaced(kernel_ebadf, "-9", "-14"), cused), std::nullopt);
  std::string no_fd = replaced(kernel_ebadf, "[fd,ptr]", "[obj,ptr]");
  EXPECT_EQ(fd_step_documented(no_fd, replaced(no_fd, "-9", "-1")), std::nullopt);
  EXPECT_EQ(fd_step_documented(kernel_ebadf, replaced(cused, "wc 76/76", "wc 40/76")),
            std::nullopt);
}

// The guest's live campaign, seed 1796309313: BC_TRANSACTION[fd,fd] whose offsets then descend
// or run past the data; the kernel took the fds and faulted (EFAULT) at the later offset, cused
// refused the first fd. Only a command of fds only: with a PTR or an object beside them the
// EFAULT may be theirs, and another errno or a longer write is not the case.
TEST(FdsOnFuse, TheKernelsEfaultAtAnOffsetAfterOnlyFdsIsDocumented_S5_3_S4_11) {
  const std::string kernel_efault =
      "29 s0.t0: write_read BC_TRANSACTION[fd,fd] | ret 0 wc 68/68 rc 8/512: BR_NOOP; "
      "BR_FAILED_REPLY; | ret 0 ee BR_FAILED_REPLY -14";
  std::string cused = replaced(kernel_efault, "-14", "-1");
  auto at_step_4 = [](std::string line) { return line.replace(0, 2, "4").replace(2, 2, "s1"); };
  EXPECT_EQ(fd_step_documented(at_step_4(kernel_efault), at_step_4(cused)), "fds-on-fuse");
  auto sent = [&](const std::string& line, const char* objects) {
    return at_step_4(replaced(line, "[fd,fd]", objects));
  };
  EXPECT_EQ(fd_step_documented(sent(kernel_efault, "[fd]"), sent(cused, "[fd]")), "fds-on-fuse");
  for (const char* near : {"[fd,ptr]", "[fd,obj]", "[obj,fd]", "[fda,fd]"})
    EXPECT_EQ(fd_step_documented(sent(kernel_efault, near), sent(cused, near)), std::nullopt)
        << near;
  EXPECT_EQ(fd_step_documented(at_step_4(replaced(kernel_efault, "-14", "-12")), at_step_4(cused)),
            std::nullopt);
  EXPECT_EQ(fd_step_documented(at_step_4(kernel_efault),
                               at_step_4(replaced(cused, "wc 68/68", "wc 40/68"))),
            std::nullopt);
  std::string kernel_completed =
      replaced(kernel_efault, "BR_FAILED_REPLY; |", "BR_TRANSACTION_COMPLETE; |");
  EXPECT_EQ(fd_step_documented(at_step_4(kernel_completed), at_step_4(cused)), std::nullopt);
}

// The caller of a reply with fds that FUSE refused: s0.t2's sync transaction parked at step 21,
// s1 read it, replied with an fd at 45; the kernel's caller read the reply, cused's EPERM.
const Trace kFdReply = {
    "21 s0.t2: parked",
    "30 s1.t1: read ret 0 wc 0/0 rc 76/512: BR_NOOP; BR_TRANSACTION target 0x0 cookie 0x0 code "
    "0x1 flags 0x0 pid=s0 euid 0 data 0 @0x0 offsets 0 @0x0; | ret 0 ee BR_OK 0",
    "45 s1.t1: write_read BC_REPLY[fd] | ret 0 wc 68/68 rc 8/512: BR_NOOP; "
    "BR_TRANSACTION_COMPLETE; | ret 0 ee BR_OK 0",
    "45 s0.t2: (call of step 21) write_read BC_TRANSACTION_SG[] | ret 0 wc 76/76 rc 76/512: "
    "BR_NOOP; BR_REPLY target 0x0 cookie 0x0 code 0x0 flags 0x0 pid=0 euid 0 data 8 @0x0 "
    "offsets 8 @0x8 [0000000000000000]; | ret 0 ee BR_OK 0",
    "401 state s0:   thread s0.t2: l 00 need_return 0",
};
const std::string kFdReplyRefused =
    "45 s0.t2: (call of step 21) write_read BC_TRANSACTION_SG[] | ret 0 wc 76/76 rc 12/512: "
    "BR_NOOP; BR_FAILED_REPLY; | ret 0 ee BR_FAILED_REPLY -1";

TEST(FdsOnFuse, TheCallerOfARefusedFdReplyGetsEpermInTheReplysPlace_S4_7) {
  Verdict v = compare(kFdReply, with(kFdReply, 3, kFdReplyRefused), "fuse");
  ASSERT_EQ(v.kind, Verdict::kDocumented);
  EXPECT_EQ(v.documented.front().rule, "fd_reply_refused_to_caller");
  // The caller's slot goes on without the reply: its later lines are set aside, and counted.
  EXPECT_EQ(v.not_compared, 1u);
  EXPECT_EQ(v.cused_not_compared, 1u);
  EXPECT_EQ(documented("run", kFdReply, with(kFdReply, 3, kFdReplyRefused)), std::nullopt);
  // A read too small for the reply: the same returns, only the extended error differs.
  std::string small =
      replaced(replaced(kFdReply[3], "rc 76/512", "rc 4/11"),
               kFdReply[3].substr(kFdReply[3].find(" BR_REPLY")), " | ret 0 ee BR_OK 0");
  Trace kernel_small = with(kFdReply, 3, small);
  EXPECT_EQ(documented("fuse", kernel_small,
                       with(kFdReply, 3, replaced(small, "BR_OK 0", "BR_FAILED_REPLY -1"))),
            "fds-on-fuse");
}

TEST(FdsOnFuse, EpermWhereNoFdReplyWasRefusedIsADivergence_S4_7) {
  auto refused_in = [](const Trace& kernel) {
    return documented("fuse", kernel, with(kernel, 3, kFdReplyRefused));
  };
  // The reply without an fd.
  EXPECT_EQ(refused_in(with(kFdReply, 2, replaced(kFdReply[2], "[fd]", "[obj]"))), std::nullopt);
  // The reply from a slot that never read the caller's transaction.
  EXPECT_EQ(refused_in(with(kFdReply, 1, replaced(kFdReply[1], "pid=s0", "pid=s2"))), std::nullopt);
  // The reply failed on the kernel too (not one that went through).
  EXPECT_EQ(refused_in(with(kFdReply, 2, replaced(kFdReply[2], "BR_OK 0", "BR_FAILED_REPLY -71"))),
            std::nullopt);
  // The caller did not wait for a reply: its step did not park.
  EXPECT_EQ(refused_in(with(kFdReply, 0,
                            "21 s0.t2: write_read BC_TRANSACTION_SG[] | ret 0 wc "
                            "76/76 rc 0/0: | ret 0 ee BR_OK 0")),
            std::nullopt);
  // The kernel's caller got a dead reply.
  Trace dead = with(kFdReply, 3, replaced(kFdReply[3], "BR_OK 0", "BR_DEAD_REPLY 0"));
  EXPECT_EQ(refused_in(dead), std::nullopt);
  // EPERM with anything else changed: the bytes read, a return added, the BR_REPLY kept.
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"rc 12/512", "rc 16/512"},
           {"BR_FAILED_REPLY;", "BR_FAILED_REPLY; BR_NOOP;"},
           {"ret 0 wc", "ret EAGAIN wc"},
           {"wc 76/76", "wc 68/76"}})
    EXPECT_EQ(documented("fuse", kFdReply, with(kFdReply, 3, replaced(kFdReplyRefused, from, to))),
              std::nullopt)
        << to;
  // The EPERM on another thread (not the caller), or on the replier's own line.
  EXPECT_EQ(documented("fuse", kFdReply,
                       with(kFdReply, 2, replaced(kFdReply[2], "BR_OK 0", "BR_FAILED_REPLY -1"))),
            std::nullopt);
}

// ---- munmap-unseen (S1.6, S11.9) ----

// gen-139's case: s1.t2's transaction parked at 22, s0 read it, s1 unmapped at 40, s0 replied
// at 48: the kernel's caller gets BR_DEAD_REPLY (ESRCH), cused's the reply into no space.
const Trace kUnmapped = {
    "22 s1.t2: parked",
    "30 s0.t0: read ret 0 wc 0/0 rc 72/512: BR_NOOP; BR_TRANSACTION target 0x0 cookie 0x0 code "
    "0x1 flags 0x0 pid=s1 euid 0 data 8 @0x0 offsets 0 @0x8 [4142434445464748]; | ret 0 ee BR_OK 0",
    "40 s1.t0: munmap ret 0",
    "48 s0.t0: write_read BC_ACQUIRE_DONE BC_FREE_BUFFER BC_REPLY_SG[] | ret 0 wc 108/108 rc "
    "8/512: BR_NOOP; BR_TRANSACTION_COMPLETE; | ret 0 ee BR_OK 0",
    "48 s1.t2: (call of step 22) write_read BC_TRANSACTION[] | ret 0 wc 68/68 rc 12/512: BR_NOOP; "
    "BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY; | ret 0 ee BR_DEAD_REPLY -3",
    "401 state s1:   thread s1.t2: l 00 need_return 0",
};
const std::string kDeliveredUnmapped =
    "48 s1.t2: (call of step 22) write_read BC_TRANSACTION[] | ret 0 wc 68/68 rc 76/512: "
    "BR_NOOP; BR_TRANSACTION_COMPLETE; BR_REPLY target 0x0 cookie 0x0 code 0x0 flags 0x0 pid=0 "
    "euid 0 data 0 no-space offsets 0 no-space unreadable; | ret 0 ee BR_OK 0";

TEST(MunmapUnseen, AReplyDeliveredAfterTheCallersMunmapIsDocumentedOnFuse_S1_6) {
  Verdict v = compare(kUnmapped, with(kUnmapped, 4, kDeliveredUnmapped), "fuse");
  ASSERT_EQ(v.kind, Verdict::kDocumented);
  EXPECT_EQ(v.documented.front().deviation, "munmap-unseen");
  EXPECT_EQ(v.not_compared, 1u);  // s1's state: it holds the reply on cused
  EXPECT_EQ(documented("run", kUnmapped, with(kUnmapped, 4, kDeliveredUnmapped)), std::nullopt);
}

// The reviewer's made-up returns in the reply's place: each field pinned.
TEST(MunmapUnseen, AMadeUpReplyOrATransactionIsADivergence_S1_6) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"BR_REPLY target 0x0", "BR_TRANSACTION target 0x0"},
           {"pid=0", "pid=s0"},
           {"euid 0", "euid 1000"},
           {"target 0x0 cookie 0x0", "target 0x0 cookie 0x10"},
           {"offsets 0 no-space", "offsets 8 no-space"},
           {"no-space unreadable", "no-space [00]"},
           {"rc 76/512", "rc 80/512"}})
    EXPECT_EQ(
        documented("fuse", kUnmapped, with(kUnmapped, 4, replaced(kDeliveredUnmapped, from, to))),
        std::nullopt)
        << to;
  // Nobody replied: no BC_REPLY since the caller's transaction.
  Trace no_reply = without(kUnmapped, 3);
  EXPECT_EQ(documented("fuse", no_reply, with(no_reply, 3, kDeliveredUnmapped)), std::nullopt);
  // The reply came from a slot that never read the caller's transaction.
  Trace other = with(kUnmapped, 1, replaced(kUnmapped[1], "pid=s1", "pid=s2"));
  EXPECT_EQ(documented("fuse", other, with(other, 4, kDeliveredUnmapped)), std::nullopt);
}

TEST(MunmapUnseen, WithoutTheMunmapOrIntoANeverMappedSpaceItIsADivergence_S1_6) {
  Trace never = with(kUnmapped, 2, "40 s1.t1: thread_exit ret 0");
  EXPECT_EQ(documented("fuse", never, with(never, 4, kDeliveredUnmapped)), std::nullopt);
  // Another slot's munmap.
  Trace other = with(kUnmapped, 2, "40 s0.t1: munmap ret 0");
  EXPECT_EQ(documented("fuse", other, with(other, 4, kDeliveredUnmapped)), std::nullopt);
  // A slot that never mapped shows "unmapped": delivering there is no documented case.
  std::string unmapped = kDeliveredUnmapped;
  unmapped = std::regex_replace(unmapped, std::regex("no-space"), "unmapped");
  EXPECT_EQ(documented("fuse", kUnmapped, with(kUnmapped, 4, unmapped)), std::nullopt);
  // The rest of the line differs too.
  std::string eagain = kDeliveredUnmapped;
  eagain.replace(eagain.find("ret 0 wc"), 5, "ret EAGAIN");
  EXPECT_EQ(documented("fuse", kUnmapped, with(kUnmapped, 4, eagain)), std::nullopt);
  // The kernel failed the call for another reason than the missing space.
  Trace other_failure =
      with(kUnmapped, 4, std::regex_replace(kUnmapped[4], std::regex("-3$"), "-22"));
  EXPECT_EQ(documented("fuse", other_failure, with(kUnmapped, 4, kDeliveredUnmapped)),
            std::nullopt);
}

// ---- undelivered-buffer-freed (S11.6, S12.7) ----

fs::path corpus_trace(const std::string& name) { return corpus() / (name + ".kernel.trace"); }

std::size_t index_of(const Trace& trace, const std::string& line) {
  auto at = std::find(trace.begin(), trace.end(), line);
  EXPECT_NE(at, trace.end()) << line;
  return static_cast<std::size_t>(at - trace.begin());
}

// freeze-3102: s0 holds the buffer it was delivered at line 51 (data 40 @0x10): cused losing it
// is a divergence, and so is a node's count that differs with no kept buffer.
TEST(UndeliveredBufferFreed, ABufferUserspaceHoldsOrAnotherCountIsADivergence_S11_6) {
  Trace kernel = read_trace(corpus_trace("freeze-3102"));
  ASSERT_FALSE(kernel.empty());
  std::size_t held = index_of(kernel, "401 state s0:   buffer @0x10 size 40:8:0 delivered");
  std::size_t node = index_of(kernel, "401 state s0:   node u0 c0 hs 1 hw 1 ls 3 lw 1 is 0 iw 0");
  for (const char* path : {"fuse", "run"}) {
    EXPECT_EQ(compare(kernel, without(kernel, held), path).kind, Verdict::kDiverged) << path;
    for (const char* ls : {"ls 7", "ls 2"}) {
      std::string changed = kernel[node];
      changed.replace(changed.find("ls 3"), 4, ls);
      EXPECT_EQ(compare(kernel, with(kernel, node, changed), path).kind, Verdict::kDiverged)
          << path << " " << ls;
      // Both at once: the held buffer gone and the node's count one less.
      EXPECT_EQ(compare(kernel, without(with(kernel, node, changed), held), path).kind,
                Verdict::kDiverged)
          << path << " " << ls;
    }
  }
}

// A transaction dropped undelivered (its receiver's thread exited with it queued): the kernel
// keeps its buffer and the node ref, cused frees both; only with the drop before.
const Trace kDropped = {
    "1 s0: open space 1040384 nonblock false: open ret 0 map 0",
    "2 s0.t0: context_mgr ret 0",
    "3 s1: open space 1040384 nonblock false: open ret 0 map 0",
    "4 s1.t0: write_read BC_TRANSACTION[] | ret 0 wc 68/68 rc 8/512: BR_NOOP; "
    "BR_TRANSACTION_COMPLETE; | ret 0 ee BR_OK 0",
    "5 s0.t0: thread_exit ret 0",
    "6 s1.t0: read ret 0 wc 0/0 rc 8/512: BR_NOOP; BR_DEAD_REPLY; | ret 0 ee BR_OK 0",
    "401 state s0:   thread s0.t1: l 00 need_return 0",
    "401 state s0:   node u0 c0 hs 1 hw 1 ls 2 lw 1 is 0 iw 0",
    "401 state s0:   buffer @0x0 size 16:0:0 delivered",
    "401 state s1:   thread s1.t0: l 00 need_return 0",
    "401 s0: killed",
    "401 s1: killed",
};

Trace freed_on_cused(Trace trace) {
  trace[7] = "401 state s0:   node u0 c0 hs 1 hw 1 ls 1 lw 1 is 0 iw 0";
  return without(trace, 8);
}

TEST(UndeliveredBufferFreed, TheDroppedTransactionsBufferAndNodeRefAreDocumented_S11_6) {
  for (const char* path : {"fuse", "run"}) {
    Verdict v = compare(kDropped, freed_on_cused(kDropped), path);
    ASSERT_EQ(v.kind, Verdict::kDocumented) << path;
    ASSERT_EQ(v.documented.size(), 2u);
    EXPECT_EQ(v.documented[0].deviation, "undelivered-buffer-freed");
    EXPECT_EQ(v.documented[1].deviation, "undelivered-buffer-freed");
    EXPECT_EQ(v.not_compared, 0u);  // compared on past them
    // Compared on: a difference after the documented lines is still found.
    Trace later = freed_on_cused(kDropped);
    later[8] = "401 state s1:   thread s1.t0: l 01 need_return 0";
    EXPECT_EQ(compare(kDropped, later, path).kind, Verdict::kDiverged);
  }
}

// The 60-minute campaign of 2026-12-06 (seed 20261432): the transaction that was dropped was
// sent in a call that parked (step 15) and was answered only after the target's thread exited
// (step 18), so its line comes after the exit's. The write half ran at the call's step: the
// buffer and its node ref are the documented case; answered before the exit's step, they are not.
TEST(UndeliveredBufferFreed, ATransactionSentByACallThatParkedBeforeTheExitWasDropped_S11_6) {
  Trace kernel = read_trace(corpus_trace("found-20261432"));
  const std::size_t node =
      index_of(kernel, "401 state s0:   node u0 c0 hs 1 hw 1 ls 2 lw 1 is 0 iw 0");
  const std::size_t buffer = index_of(kernel, "401 state s0:   buffer @0x0 size 8:0:0 delivered");
  Trace freed = without(
      with(kernel, node, "401 state s0:   node u0 c0 hs 1 hw 1 ls 1 lw 1 is 0 iw 0"), buffer);
  for (const char* path : {"fuse", "run"}) {
    Verdict v = compare(kernel, freed, path);
    ASSERT_EQ(v.kind, Verdict::kDocumented) << path;
    EXPECT_EQ(v.documented.size(), 2u) << path;
  }
  // The same call made after the exit's step sent nothing the exit could drop.
  const std::size_t late =
      index_of(kernel,
               "18 s1.t0: (call of step 15) write_read BC_TRANSACTION[] | ret 0 wc 68/68 rc 4/10: "
               "BR_NOOP; | ret 0 ee BR_OK 0");
  Trace after = with(kernel, late,
                     "18 s1.t0: (call of step 18) write_read BC_TRANSACTION[] | ret 0 wc 68/68 rc "
                     "4/10: BR_NOOP; | ret 0 ee BR_OK 0");
  Trace after_freed = without(
      with(after, node, "401 state s0:   node u0 c0 hs 1 hw 1 ls 1 lw 1 is 0 iw 0"), buffer);
  EXPECT_EQ(compare(after, after_freed, "fuse").kind, Verdict::kDiverged);
}

TEST(UndeliveredBufferFreed, WithoutADropBeforeOrWhenDeliveredItIsADivergence_S11_6) {
  // Nothing dropped: no exit, no dead reply.
  Trace kept = with(with(kDropped, 4, "5 s0.t0: flush ret 0"), 5,
                    "6 s1.t0: read ret 0 wc 0/0 rc 4/512: BR_NOOP; | ret 0 ee BR_OK 0");
  EXPECT_EQ(compare(kept, freed_on_cused(kept), "fuse").kind, Verdict::kDiverged);
  // The buffer was delivered to s0 (data 16 @0x0): userspace holds it.
  Trace delivered = kDropped;
  delivered.insert(delivered.begin() + 4,
                   "4 s0.t0: read ret 0 wc 0/0 rc 72/512: BR_NOOP; BR_TRANSACTION target 0x0 "
                   "cookie 0x0 code 0x1 flags 0x0 pid=s1 euid 0 data 16 @0x0 offsets 0 @0x10 "
                   "[41424344454647484142434445464748]; | ret 0 ee BR_OK 0");
  EXPECT_EQ(compare(delivered, freed_on_cused(without(delivered, 4)), "fuse").kind,
            Verdict::kDiverged);
  // Delivered and freed, then a buffer at the same offset dropped (seed-fd_teardown under
  // `cused run`): documented; freed after the drop, the drop was not this buffer's.
  Trace reused = delivered;
  reused.insert(reused.begin() + 5,
                "4 s0.t0: write_read BC_FREE_BUFFER | ret 0 wc 12/12 rc 0/0: | ret 0 ee BR_OK 0");
  auto cused_of = [](Trace trace) {
    trace[9] = "401 state s0:   node u0 c0 hs 1 hw 1 ls 1 lw 1 is 0 iw 0";
    return without(trace, 10);
  };
  EXPECT_EQ(compare(reused, cused_of(reused), "run").kind, Verdict::kDocumented);
  Trace freed_late = reused;
  std::rotate(freed_late.begin() + 5, freed_late.begin() + 6, freed_late.begin() + 8);
  EXPECT_EQ(compare(freed_late, cused_of(freed_late), "run").kind, Verdict::kDiverged);
  // The node two fewer for one kept buffer.
  Trace two = freed_on_cused(kDropped);
  two[7] = "401 state s0:   node u0 c0 hs 1 hw 1 ls 0 lw 1 is 0 iw 0";
  EXPECT_EQ(compare(kDropped, two, "fuse").kind, Verdict::kDiverged);
  // cused lists the buffer and still has the node one fewer.
  EXPECT_EQ(compare(kDropped, with(kDropped, 7, freed_on_cused(kDropped)[7]), "fuse").kind,
            Verdict::kDiverged);
  // The reverse: cused keeps a buffer the kernel does not list.
  EXPECT_EQ(compare(freed_on_cused(kDropped), kDropped, "fuse").kind, Verdict::kDiverged);
}

// ---- release-race (S1.9) ----

const Trace kRace = {
    "36 s1.t0: write_read BC_TRANSACTION[] | ret 0 wc 68/68 rc 0/0: | ret 0 ee BR_OK 0",
    "401 s1.t0: (call of step 36) read ret 0 wc 0/0 rc 52/512: BR_NOOP; BR_INCREFS "
    "00200000000000000200000000000000; BR_ACQUIRE 00200000000000000200000000000000; "
    "BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY; | ret 0 ee BR_OK 0",
    "401 s0: killed",
};
const std::string kRaceOnCused =
    "401 s1.t0: (call of step 36) read ret 0 wc 0/0 rc 12/512: BR_NOOP; "
    "BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY; | ret 0 ee BR_OK 0";

TEST(ReleaseRace, NodeWorkTheKernelsCallerReadDuringTheReleaseIsDocumented_S1_9) {
  for (const char* path : {"fuse", "run"})
    EXPECT_EQ(documented(path, kRace, with(kRace, 1, kRaceOnCused)), "release-race") << path;
}

TEST(ReleaseRace, AnythingElseIsADivergence_S1_9) {
  // cused with the node work, the kernel without.
  EXPECT_EQ(documented("fuse", with(kRace, 1, kRaceOnCused), kRace), std::nullopt);
  // Work for two nodes.
  std::string two = kRace[1];
  two.replace(two.find("BR_ACQUIRE 0020"), 15, "BR_ACQUIRE 0030");
  EXPECT_EQ(documented("fuse", with(kRace, 1, two), with(kRace, 1, kRaceOnCused)), std::nullopt);
  // Another extended error, another byte count.
  std::string ee = kRaceOnCused;
  ee.replace(ee.find("ee BR_OK 0"), 10, "ee BR_DEAD_REPLY 0");
  EXPECT_EQ(documented("fuse", kRace, with(kRace, 1, ee)), std::nullopt);
  std::string bytes = kRaceOnCused;
  bytes.replace(bytes.find("rc 12/512"), 9, "rc 16/512");
  EXPECT_EQ(documented("fuse", kRace, with(kRace, 1, bytes)), std::nullopt);
  // No proc died at that step.
  Trace no_kill = without(kRace, 2);
  EXPECT_EQ(documented("fuse", no_kill, with(no_kill, 1, kRaceOnCused)), std::nullopt);
}

// ---- issue 48's made-up inputs (tools/check's diff-mutations runs every one-line change) ----

// `name`'s kernel trace with the line that starts with `prefix` changed by `change`.
struct CorpusLine {
  Trace kernel;
  std::size_t at = 0;
};

CorpusLine corpus_line(const std::string& name, const std::string& prefix) {
  CorpusLine out{read_trace(corpus_trace(name))};
  auto it = std::find_if(out.kernel.begin(), out.kernel.end(),
                         [&](const std::string& l) { return l.starts_with(prefix); });
  EXPECT_NE(it, out.kernel.end()) << name << ": " << prefix;
  out.at = static_cast<std::size_t>(it - out.kernel.begin());
  return out;
}

std::string with_ee(const std::string& line, const std::string& ee) {
  return line.substr(0, line.rfind(" | ret 0 ee ")) + " | ret 0 ee " + ee;
}

// fd_reply_refused_to_caller accepted EPERM on lines that carry no fd and wait for no reply.
TEST(Issue48, EpermOnACallThatWaitsForNoFdReplyIsADivergence_S4_7) {
  for (const auto& [name, prefix] : std::vector<std::pair<std::string, std::string>>{
           {"gen-98", "41 s3.t1: write_read BC_REQUEST_DEATH_NOTIFICATION"},
           {"gen-99", "21 s2.t0: write_read BC_RELEASE BC_ACQUIRE_DONE | ret EAGAIN"},
           {"found-1796171906", "47 s2.t1: write_read BC_TRANSACTION_SG[]"}}) {
    CorpusLine c = corpus_line(name, prefix);
    if (c.at >= c.kernel.size()) continue;
    Trace cused = with(c.kernel, c.at, with_ee(c.kernel[c.at], "BR_FAILED_REPLY -1"));
    EXPECT_EQ(compare(c.kernel, cused, "fuse").kind, Verdict::kDiverged) << name;
  }
}

// fds_refused compared neither returns nor read bytes: each of these cused answers to a
// transaction the kernel sent is a divergence.
TEST(Issue48, ARefusalWithOtherBytesThanTheKernelsIsADivergence_S5_3) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"rc 8/512: BR_NOOP; BR_FAILED_REPLY;", "rc 4/512: BR_NOOP;"},
           {"BR_FAILED_REPLY; |", "BR_DEAD_REPLY; |"},
           {"BR_FAILED_REPLY; |", "BR_FAILED_REPLY; BR_NOOP; |"},
           {"rc 8/512", "rc 8/4096"},
           {"wc 68/68", "wc 68/999"},
           {"ee BR_FAILED_REPLY -1", "ee BR_DEAD_REPLY 0"}})
    EXPECT_EQ(documented("fuse", kFdSent, with(kFdSent, 3, replaced(kFdRefused, from, to))),
              std::nullopt)
        << to;
  // A refusal is immediate: never a parked call's late answer.
  Trace late = kFdSent;
  late[3] = "4 s1.t0: parked";
  late.push_back(replaced(kFdSent[3], "4 s1.t0: ", "9 s1.t0: (call of step 4) "));
  Trace cused = late;
  cused.back() = replaced(replaced(kFdRefused, "4 s1.t0: ", "9 s1.t0: (call of step 4) "),
                          "BR_FAILED_REPLY -1", "BR_FAILED_REPLY -1");
  EXPECT_EQ(compare(late, cused, "fuse").kind, Verdict::kDiverged);
}

// undelivered_buffer accepted deleting a buffer line userspace still holds.
TEST(Issue48, DeletingABufferUserspaceHoldsIsADivergence_S11_6) {
  for (const auto& [name, prefix] : std::vector<std::pair<std::string, std::string>>{
           {"gen-132", "401 state s2:   buffer @0x0 size 16:0:0 delivered"},
           {"gen-160", "401 state s0:   buffer @0x0 size 24:8:48 delivered"},
           {"gen-187", "401 state s1:   buffer @0x0 size 24:0:0 delivered"},
           {"found-1796171906", "401 state s0:   buffer @0x0 size 40:8:0 delivered"}}) {
    CorpusLine c = corpus_line(name, prefix);
    if (c.at >= c.kernel.size()) continue;
    for (const char* path : {"fuse", "run"})
      EXPECT_EQ(compare(c.kernel, without(c.kernel, c.at), path).kind, Verdict::kDiverged)
          << name << " " << path;
  }
}

// After a documented line whose effect goes on, the rest is still compared: a made-up line of
// a slot the deviation does not reach is a divergence, and what is set aside is counted on both
// sides.
TEST(Issue48, AfterAnExcusedLineTheRestIsStillCompared_S5_3) {
  Trace kernel = kFdSent;
  kernel.push_back("401 state s2:   thread s2.t0: l 00 need_return 0");
  kernel.push_back("401 state s1:   thread s1.t0: l 00 need_return 0");
  Trace cused = with(kernel, 3, kFdRefused);
  Verdict same = compare(kernel, cused, "fuse");
  EXPECT_EQ(same.kind, Verdict::kDocumented);
  EXPECT_EQ(same.not_compared, 1u);  // s1's state: its transaction went out on the kernel only
  EXPECT_EQ(same.cused_not_compared, 1u);
  cused[4] = "401 state s2:   thread s2.t0: l 01 need_return 0";
  EXPECT_EQ(compare(kernel, cused, "fuse").kind, Verdict::kDiverged);
  cused.push_back("401 state s3:   buffer @0x0 size 8:0:0 delivered");
  cused[4] = kernel[4];
  EXPECT_EQ(compare(kernel, cused, "fuse").kind, Verdict::kDiverged);
}

}  // namespace
}  // namespace cused::diff
