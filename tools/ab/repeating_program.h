// SPDX-License-Identifier: GPL-2.0-only
// A program run back to back until the block ends (conditions.background_traffic: nice-19
// binder-messaging groups of their own beside the measured workload): started again whenever it
// ends, 0.2 s later if it failed. Stopped with the block, or on Ctrl-C, with its current run.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tools/ab/child_process.h"
#include "tools/ab/stop_signals.h"

namespace cused::tools::ab {

class RepeatingProgram {
 public:
  RepeatingProgram(std::vector<std::string> argv, ChildOptions options);
  ~RepeatingProgram();
  RepeatingProgram(const RepeatingProgram&) = delete;
  RepeatingProgram& operator=(const RepeatingProgram&) = delete;

 private:
  void repeat();

  std::vector<std::string> argv_;
  ChildOptions options_;
  std::mutex lock_;
  std::condition_variable stopped_changed_;
  bool stopped_ = false;  // guarded by lock_
  pid_t current_ = -1;    // guarded by lock_: the run in progress, for the stop signal
  std::optional<StopCleanup> on_stop_signal_;
  std::thread thread_;
};

}  // namespace cused::tools::ab
