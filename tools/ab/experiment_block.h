// SPDX-License-Identifier: GPL-2.0-only
// One block of `binder-ab run FILE`, made by binder-ab itself (no shell): the experiment's
// conditions' zram swap and memory cgroup, its daemon with devices A and B on the comparison's
// mount, a servicemanager on each device, and the background programs (nice-19 callers of the
// workload's services, separate nice-19 binder-messaging traffic, CPU hogs, the cgroup's
// anonymous program). Members are built in that order and destroyed in the reverse one, so that
// every program ends before the daemon it talks to, the daemon before its cgroup and swap, and
// the mount last; on Ctrl-C each part's StopCleanup does the same, newest first.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/ab/block_state.h"
#include "tools/ab/child_process.h"
#include "tools/ab/experiment_file.h"
#include "tools/ab/memory_cgroup.h"
#include "tools/ab/mount_point.h"
#include "tools/ab/repeating_program.h"
#include "tools/ab/zram_swap.h"

namespace cused::tools::ab {

// Where the programs a block starts are (beside binder-ab in a build or an installation).
struct BlockPrograms {
  std::string cused, servicemanager, binder_background, binder_messaging;
};

class ExperimentBlock : public BlockState {
 public:
  // Starts the block's state on `mount` and returns once its devices are there and its
  // servicemanagers have had their moment to register. Throws std::runtime_error (what is
  // started so far is torn down).
  ExperimentBlock(const Experiment& experiment, const BlockPrograms& programs,
                  const std::string& mount);
  ~ExperimentBlock() override;

  bool running() override;
  std::string describe_end() const override;
  void stop(std::chrono::duration<double> grace = std::chrono::seconds(5)) override;

 private:
  void start_daemon(const Experiment& experiment, const BlockPrograms& programs);
  void start_memory_pressure(const ExperimentMemoryCgroup& memcg);
  void start_servicemanagers(const BlockPrograms& programs);
  void start_background(const Experiment& experiment, const BlockPrograms& programs);

  std::string mount_;
  std::vector<std::string> device_names_;
  std::optional<BlockMount> block_mount_;
  std::optional<ZramSwap> zram_;
  std::optional<MemoryCgroup> cgroup_;
  std::optional<ChildProcess> daemon_;
  std::vector<std::unique_ptr<ChildProcess>> programs_;       // started after the daemon
  std::vector<std::unique_ptr<RepeatingProgram>> repeating_;  // after those
  int daemon_status_ = 0;
  bool stopped_ = false;
};

}  // namespace cused::tools::ab
