// SPDX-License-Identifier: GPL-2.0-only
// process_exiting: whether a thread the FUSE path saw exit went with its whole process (then the
// proc's release, not the thread's, tells its callers: S2.6, S1.9) or left a live process (then
// it is released as libbinder's BINDER_THREAD_EXIT(NULL) would release it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "cused/thread_exit_watcher.h"

namespace cused {
namespace {

// A child that waits in pause() until killed; `thread_first` has one of its threads exit first.
pid_t PausedChild(bool thread_first, int ready_fd) {
  pid_t child = fork();
  if (child == 0) {
    if (thread_first) std::thread([] {}).join();
    char one = 1;
    [[maybe_unused]] auto written = write(ready_fd, &one, 1);
    for (;;) pause();
  }
  return child;
}

pid_t StartedChild(bool thread_first) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  pid_t child = PausedChild(thread_first, pipe_fds[1]);
  char one;
  EXPECT_EQ(read(pipe_fds[0], &one, 1), 1);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  return child;
}

TEST(ProcessExiting, ALiveProcessIsNot_S2_6) {
  EXPECT_FALSE(process_exiting(getpid()));
  pid_t child = StartedChild(false);
  EXPECT_FALSE(process_exiting(child));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

// libbinder's case: a thread ends and its process goes on, so its binder thread is released.
TEST(ProcessExiting, AProcessWhoseThreadEndedIsNot_S2_6) {
  pid_t child = StartedChild(true);
  EXPECT_FALSE(process_exiting(child));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

// From the kill on, every moment of the exit reads as exiting: SIGKILL pending, PF_EXITING, a
// zombie, and after the reap nothing at all.
TEST(ProcessExiting, AKilledProcessIsFromTheKillOn_S1_9) {
  pid_t child = StartedChild(true);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  EXPECT_TRUE(process_exiting(child));
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);  // a zombie now
  EXPECT_TRUE(process_exiting(child));
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(process_exiting(child));
}

}  // namespace
}  // namespace cused
