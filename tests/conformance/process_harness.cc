// SPDX-License-Identifier: GPL-2.0-only
#include "tests/conformance/process_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

namespace cused::conformance {

namespace {

// A child that is still running this long after it started is stuck: SIGALRM ends it.
constexpr unsigned kChildLifetimeSeconds = 30;

}  // namespace

Channel::Channel() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return;
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
}

Channel::~Channel() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
}

void Channel::send(std::uint64_t value) const {
  if (::write(write_fd_, &value, sizeof(value)) != sizeof(value))
    ADD_FAILURE() << "channel write: " << std::strerror(errno);
}

::testing::AssertionResult Channel::receive(std::uint64_t& value, int timeout_ms) const {
  pollfd readable{read_fd_, POLLIN, 0};
  if (::poll(&readable, 1, timeout_ms) != 1)
    return ::testing::AssertionFailure()
           << "no message on the channel after " << timeout_ms << " ms";
  if (::read(read_fd_, &value, sizeof(value)) != sizeof(value))
    return ::testing::AssertionFailure() << "channel read: " << std::strerror(errno);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Channel::wait(int timeout_ms) const {
  std::uint64_t ignored;
  return receive(ignored, timeout_ms);
}

Child::Child(std::function<void()> body) {
  std::fflush(nullptr);  // or the child would print the parent's buffered output again
  pid_ = ::fork();
  if (pid_ < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return;
  }
  if (pid_ > 0) return;
  ::alarm(kChildLifetimeSeconds);
  int status = 0;
  try {
    body();
    status = ::testing::Test::HasFailure() ? 1 : 0;
  } catch (const std::exception& error) {
    std::printf("child %d threw: %s\n", ::getpid(), error.what());
    status = 2;
  }
  std::fflush(nullptr);
  ::_exit(status);
}

Child::~Child() {
  if (pid_ > 0) kill();
}

::testing::AssertionResult Child::finish(int timeout_ms) {
  if (pid_ <= 0) return ::testing::AssertionFailure() << "no child";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int status = 0;
  for (;;) {
    pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
    if (reaped == pid_) break;
    if (reaped < 0) return ::testing::AssertionFailure() << "waitpid: " << std::strerror(errno);
    if (std::chrono::steady_clock::now() > deadline) {
      kill();
      return ::testing::AssertionFailure() << "child did not exit within " << timeout_ms << " ms";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const pid_t pid = pid_;
  pid_ = -1;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ::testing::AssertionSuccess();
  if (WIFSIGNALED(status))
    return ::testing::AssertionFailure()
           << "child " << pid << " killed by signal " << WTERMSIG(status);
  return ::testing::AssertionFailure()
         << "child " << pid << " failed (exit " << WEXITSTATUS(status) << ")";
}

void Child::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace cused::conformance
