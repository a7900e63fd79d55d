// SPDX-License-Identifier: GPL-2.0-only
// The command line an experiment file's workload runs as, once per measured run ("{dev}" the
// variant's device), and what binder-ab reads from it: binder-throughput, Google's
// binderThroughputTest (under with-dev-binder), binder-sendvec, binder-messaging, or the file's
// own command; each under `cused run` on the block's mount, at the workload's nice and real-time
// class (nice, chrt).
#pragma once

#include <string>
#include <vector>

#include "tools/ab/experiment_file.h"

namespace cused::tools::ab {

struct WorkloadPrograms {
  std::string cused, binder_throughput, binder_throughput_test, binder_sendvec, binder_messaging;
};

struct WorkloadCommand {
  std::vector<std::string> command;
  bool dev_binder = false;  // the program opens /dev/binder only (binder-ab --dev-binder)
  std::string metric, metric_name;
  bool lower_is_better = false;
  bool counts = false;
};

WorkloadCommand workload_command(const Experiment& experiment, const std::string& mount,
                                 const WorkloadPrograms& programs);

}  // namespace cused::tools::ab
