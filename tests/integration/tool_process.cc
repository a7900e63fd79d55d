// SPDX-License-Identifier: GPL-2.0-only
#include "tests/integration/tool_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace cused::testing {

std::string binary_from_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value) throw std::runtime_error(std::string(name) + " is not set (run through meson test)");
  return value;
}

ToolProcess::Result run_shell(const std::string& command, std::chrono::milliseconds limit) {
  ToolProcess shell({"/bin/sh", "-c", command + " 2>&1"});
  return shell.finish(limit);
}

int exit_status(const ToolProcess::Result& result) {
  return !result.timed_out && WIFEXITED(result.status) ? WEXITSTATUS(result.status) : -1;
}

ToolProcess::ToolProcess(std::vector<std::string> argv, Capture capture) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) < 0) throw std::runtime_error("pipe failed");
  std::vector<char*> words;
  for (auto& word : argv) words.push_back(word.data());
  words.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    // A tool must not outlive the test that serves its device.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out[1], STDOUT_FILENO);
    if (capture == Capture::stdout_and_stderr) dup2(out[1], STDERR_FILENO);
    execv(words[0], words.data());
    _exit(127);
  }
  close(out[1]);
  stdout_fd_ = out[0];
}

ToolProcess::~ToolProcess() {
  kill_and_reap();
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

void ToolProcess::kill_and_reap() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool ToolProcess::read_some(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd fd{stdout_fd_, POLLIN, 0};
  if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) return true;
  char buffer[4096];
  ssize_t got = read(stdout_fd_, buffer, sizeof buffer);
  if (got <= 0) return false;  // EOF: the tool (and any child holding stdout) is done
  output_.append(buffer, static_cast<std::size_t>(got));
  return true;
}

bool ToolProcess::read_until(const std::string& text, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (output_.find(text) == std::string::npos)
    if (!read_some(deadline)) return output_.find(text) != std::string::npos;
  return true;
}

ToolProcess::Result ToolProcess::finish(std::chrono::milliseconds limit) {
  Result result;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (read_some(deadline)) {
  }
  result.output = output_;
  if (std::chrono::steady_clock::now() >= deadline) {
    result.timed_out = true;
    kill_and_reap();
    return result;
  }
  waitpid(pid_, &result.status, 0);
  pid_ = -1;
  return result;
}

}  // namespace cused::testing
