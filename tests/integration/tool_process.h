// A cused tool (servicemanager, binder-throughput) run as a child process by an integration test:
// stdout captured, bounded in time (killed at the deadline), killed on destruction.
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

  // argv[0] is the binary's path. Throws std::runtime_error if it cannot start.
  explicit ToolProcess(std::vector<std::string> argv);
  ~ToolProcess();
  ToolProcess(const ToolProcess&) = delete;
  ToolProcess& operator=(const ToolProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Collects stdout until the tool exits; at `limit`, kills it and says so.
  Result finish(std::chrono::milliseconds limit);

 private:
  void kill_and_reap();

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
};

// The path a meson test passes in the environment variable `name` (e.g. SERVICEMANAGER_BINARY).
std::string binary_from_env(const char* name);

}  // namespace cused::testing
