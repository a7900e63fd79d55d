// SPDX-License-Identifier: GPL-2.0-only
// Several binder processes in one test: Child forks a process that runs a test body (gtest
// assertions work in it and print there; its exit status says whether any failed), and Channel
// is a pipe on which the processes hand each other numbers (pids, handles, "go" signals) with a
// bounded wait, so a driver that never delivers fails a test instead of hanging it.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>

namespace cused::conformance {

// A one-way pipe of 64-bit values. Create it before forking; any process may send or receive.
class Channel {
 public:
  Channel();
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  void send(std::uint64_t value) const;
  ::testing::AssertionResult receive(std::uint64_t& value, int timeout_ms = 10000) const;
  // receive() for values whose content does not matter (a "go ahead").
  ::testing::AssertionResult wait(int timeout_ms = 10000) const;

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
};

// A forked process running `body`. The child exits 0 when its body recorded no gtest failure, 1
// when it did, 2 when it threw; an alarm kills it if it outlives the test's patience.
class Child {
 public:
  explicit Child(std::function<void()> body);
  // Kills and reaps the child if the test did not finish().
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Waits (bounded) for the child to exit and succeeds when it exited 0.
  ::testing::AssertionResult finish(int timeout_ms = 20000);
  // SIGKILL and reap: the process dies with its binder procs (S1.9).
  void kill();

 private:
  pid_t pid_ = -1;
};

}  // namespace cused::conformance
