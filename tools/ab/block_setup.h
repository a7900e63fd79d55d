// SPDX-License-Identifier: GPL-2.0-only
// binder-ab --block-setup: the command that gives each block its fresh system state. It runs for
// the whole block in a process group of its own (a daemon, its servicemanagers, background load
// and cgroups, all started by it), and is stopped when the block's pairs are measured, so that
// the next block starts from nothing that this one left (docs/ab.md, "Blocks").
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "tools/ab/block_state.h"
#include "tools/ab/stop_signals.h"

namespace cused::tools::ab {

class BlockSetup : public BlockState {
 public:
  // Starts `/bin/sh -c command` with CUSED_AB_BLOCK=block (1-based) and, unless `ready_file` is
  // empty, CUSED_AB_READY=ready_file (the path a setup creates once its state is ready, for
  // --block-signals-ready) in its environment, stdin from /dev/null and its stdout on binder-ab's
  // stderr (the table stays alone on stdout). Throws std::system_error if it cannot start.
  BlockSetup(const std::string& command, int block, const std::string& ready_file);
  // stop(), whatever path leaves the block.
  ~BlockSetup() override;
  BlockSetup(const BlockSetup&) = delete;
  BlockSetup& operator=(const BlockSetup&) = delete;

  // Whether the command still runs; once it has ended, `ended_status()` has its waitpid status.
  bool running() override;
  int ended_status() const { return status_; }
  std::string describe_end() const override;

  // SIGTERM to the command (a script that traps it stops what it started in its own order),
  // after `grace` SIGTERM to its whole group, after another `grace` SIGKILL to the group; then
  // the leader is reaped. Idempotent.
  void stop(std::chrono::duration<double> grace = std::chrono::seconds(5)) override;

 private:
  bool wait_for_leader(std::chrono::duration<double> limit);

  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::optional<StopCleanup> on_stop_signal_;  // binder-ab stopped by a signal: the group too
};

}  // namespace cused::tools::ab
