// SPDX-License-Identifier: GPL-2.0-only
// A cused tool (servicemanager, binder-throughput) run as a child process by an integration test:
// stdout (and, if asked, stderr) captured, bounded in time (killed at the deadline), killed on
// destruction.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace cused::testing {

class ToolProcess {
 public:
  struct Result {
    bool timed_out = false;
    int status = -1;  // waitpid status
    std::string output;
  };

  enum class Capture { stdout_only, stdout_and_stderr };

  // argv[0] is the binary's path. Throws std::runtime_error if it cannot start.
  explicit ToolProcess(std::vector<std::string> argv, Capture capture = Capture::stdout_only);
  ~ToolProcess();
  ToolProcess(const ToolProcess&) = delete;
  ToolProcess& operator=(const ToolProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Collects stdout until the tool exits; at `limit`, kills it and says so. The output includes
  // what read_until read.
  Result finish(std::chrono::milliseconds limit);
  // Reads the output until it holds `text` (true) or `limit` passes or the tool closes it (false),
  // while the tool runs on: what a user sees before it ends.
  bool read_until(const std::string& text, std::chrono::milliseconds limit);
  const std::string& output_so_far() const { return output_; }

 private:
  void kill_and_reap();
  // One read of the output into output_, waiting at most until `deadline`: false at EOF or then.
  bool read_some(std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string output_;
};

// The tool's exit status, or -1 if it was killed or timed out.
int exit_status(const ToolProcess::Result& result);

// `command` through /bin/sh with stderr folded into stdout (what a user reads), finished within
// `limit`.
ToolProcess::Result run_shell(const std::string& command, std::chrono::milliseconds limit);

// The path a meson test passes in the environment variable `name` (e.g. SERVICEMANAGER_BINARY).
std::string binary_from_env(const char* name);

}  // namespace cused::testing
