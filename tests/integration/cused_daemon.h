// SPDX-License-Identifier: GPL-2.0-only
// A cused daemon process for an integration test, as a user runs it: `cused --mount DIR
// --foreground ARGS...` (CUSED_BINARY), started by the constructor and stopped with SIGTERM by
// stop() or the destructor, which then removes DIR.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "tests/integration/tool_process.h"

namespace cused::testing {

class CusedDaemon {
 public:
  // Starts the daemon on `dir` with `extra_args` and waits (bounded) until `node` appears under
  // `dir`: serving() says whether it did. The daemon's stderr is captured with its stdout only if
  // `capture` says so.
  explicit CusedDaemon(std::string dir, const std::vector<std::string>& extra_args = {},
                       const std::string& node = "binder",
                       ToolProcess::Capture capture = ToolProcess::Capture::stdout_only);
  // stop(), then remove_mount_point(dir()).
  ~CusedDaemon();
  CusedDaemon(const CusedDaemon&) = delete;
  CusedDaemon& operator=(const CusedDaemon&) = delete;

  bool serving() const { return serving_; }
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  // SIGTERM, and the daemon's output and status once it has ended (killed after `limit`); an
  // empty Result once it was stopped.
  ToolProcess::Result stop(std::chrono::milliseconds limit = std::chrono::seconds(20));

 private:
  std::string dir_;
  std::optional<ToolProcess> process_;
  bool serving_ = false;
};

// Detaches what is mounted on `dir` (a daemon that died without unmounting leaves its mount) and
// removes `dir`.
void remove_mount_point(const std::string& dir);

}  // namespace cused::testing
