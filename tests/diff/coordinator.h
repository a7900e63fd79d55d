// SPDX-License-Identifier: GPL-2.0-only
// Runs one fuzz script (tests/fuzz/script.h, the same bytes the in-process fuzzer reads) on a
// real binder device: each slot a process of its own (tests/diff/slot_process.h), each step sent
// to its slot and thread in script order, and the next step only once the driver has answered
// this one or the call has parked. The trace is one line per answer, with the slots' process ids
// replaced by their roles, so that the kernel's trace and cused's compare line by line.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tests/diff/proc_state.h"

namespace cused::diff {

struct RunOptions {
  std::string device;
  // How long a call may take before it counts as parked, and how long the driver gets after a
  // step to wake parked readers: long enough for the slowest path (the kernel under qemu TCG).
  std::chrono::milliseconds settle{30};
  // Where the driver lists its procs (cused's binder_logs, the kernel's debugfs binder dir):
  // after a slot dies, its proc's entry going away says the driver's release has finished.
  std::string state_dir;
  // The state lines after every step, not only at the end: where a state divergence begins.
  bool state_every_step = false;
};

std::vector<std::string> run_script_on_device(std::span<const std::uint8_t> script,
                                              const RunOptions& options);

// The trace, and who was who in that run: a trace of the driver's own events (event_lines.h)
// names tasks by the tids and pids the roles map to the script's slots and threads.
struct ScriptRun {
  std::vector<std::string> trace;
  Roles roles;
};
ScriptRun run_script(std::span<const std::uint8_t> script, const RunOptions& options);

}  // namespace cused::diff
