// SPDX-License-Identifier: GPL-2.0-only
// ThreadGroups: the tid -> thread group answer behind the S1.3 "other process" check and
// sender_pid, cached but read again once a tid may have been handed out anew.
#include "cused/thread_groups.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <thread>

#include "cused/request/signal_watcher.h"
#include "cused/proc_status.h"

namespace cused {
namespace {

// /proc as the test wants it: tid -> tgid, and a clock the test moves.
std::map<pid_t, pid_t> proc_table;
int reads = 0;
ThreadGroups::Clock::time_point clock_now;

pid_t FakeRead(pid_t tid) {
  reads++;
  auto it = proc_table.find(tid);
  return it == proc_table.end() ? 0 : it->second;
}
ThreadGroups::Clock::time_point FakeNow() { return clock_now; }

class ThreadGroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    proc_table.clear();
    reads = 0;
    clock_now = {};
  }
  ThreadGroups groups{FakeRead, FakeNow};
};

TEST_F(ThreadGroupsTest, RepeatedRequestsOfAThreadReadProcOnce) {
  proc_table[1001] = 1000;
  EXPECT_EQ(groups.of(1001), 1000);
  clock_now += ThreadGroups::kRecheck / 2;
  EXPECT_EQ(groups.of(1001), 1000);
  EXPECT_EQ(reads, 1);
}

// S1.3: a tid that exited and was handed to a thread of another process (one that shares the
// open file through fork or SCM_RIGHTS) must not keep the first process's identity.
TEST_F(ThreadGroupsTest, ReusedTidIsReadAgainAfterTheRecheckTime_S1_3) {
  proc_table[1001] = 1000;
  EXPECT_EQ(groups.of(1001), 1000);
  proc_table[1001] = 2000;
  clock_now += ThreadGroups::kRecheck;
  EXPECT_EQ(groups.of(1001), 2000);
  EXPECT_EQ(reads, 2);
}

TEST_F(ThreadGroupsTest, GoneThreadIsZeroAndNotCached) {
  EXPECT_EQ(groups.of(1001), 0);
  proc_table[1001] = 1000;
  EXPECT_EQ(groups.of(1001), 1000);
  EXPECT_EQ(groups.cached(), 1u);
}

TEST_F(ThreadGroupsTest, OldAnswersArePrunedWhenTheCacheIsLarge) {
  for (pid_t tid = 1; tid <= static_cast<pid_t>(ThreadGroups::kPruneAbove); tid++) {
    proc_table[tid] = 7;
    groups.of(tid);
  }
  EXPECT_EQ(groups.cached(), ThreadGroups::kPruneAbove);
  clock_now += ThreadGroups::kRecheck;
  proc_table[5000] = 7;
  groups.of(5000);
  EXPECT_EQ(groups.cached(), 1u) << "only the fresh answer stays";
}

TEST(ReadThreadGroup, ThisProcessAndOneOfItsThreads) {
  EXPECT_EQ(read_thread_group(getpid()), getpid());
  pid_t seen = 0;
  std::thread([&] { seen = read_thread_group(static_cast<pid_t>(syscall(SYS_gettid))); }).join();
  EXPECT_EQ(seen, getpid());
}

TEST(ProcStatus, FieldsAreNamedWithoutColonAndValuesWithoutBlanks) {
  std::string name_value, tgid_value;
  EXPECT_TRUE(read_proc_status(getpid(), [&](std::string_view name, std::string_view value) {
    if (name == "Name") name_value = value;
    if (name == "Tgid") tgid_value = value;
  }));
  EXPECT_EQ(name_value, "daemon-unit-tes") << "comm is cut to 15 characters";
  EXPECT_EQ(tgid_value, std::to_string(getpid()));
  EXPECT_FALSE(read_proc_status(-1, [](std::string_view, std::string_view) {}));
}

// S1.12 on io_uring mounts: only a signal the caller's thread can take ends its parked request.
TEST(UnblockedSignal, ABlockedPendingSignalIsNoReason) {
  bool before = true, blocked_pending = true;
  std::thread([&] {
    pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    before = has_unblocked_signal(tid);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
    syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
    blocked_pending = has_unblocked_signal(tid);
    int taken = 0;
    sigwait(&usr1, &taken);
  }).join();
  EXPECT_FALSE(before);
  EXPECT_FALSE(blocked_pending);
}

// A stopped process keeps a signal sent to it pending and unblocked until it runs again.
TEST(UnblockedSignal, APendingSignalTheThreadTakesIsAReason) {
  pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  ASSERT_GT(child, 0);
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, WUNTRACED), child);
  EXPECT_FALSE(has_unblocked_signal(child));
  ASSERT_EQ(kill(child, SIGUSR1), 0);
  EXPECT_TRUE(has_unblocked_signal(child));
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
}

}  // namespace
}  // namespace cused
