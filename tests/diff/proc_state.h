// SPDX-License-Identifier: GPL-2.0-only
// What a driver shows of a proc in its state files (the kernel's debugfs binder/proc/PID,
// cused's binder_logs/proc/PID: print_binder_proc's format, S9.12), normalised so that the
// kernel's text and cused's compare line by line: pids and tids become script roles, node debug
// ids become the node's owner and pointer, buffer addresses become offsets into the owner's
// buffer space, and what only says when or where the driver printed (debug ids of refs,
// transactions and buffers, kernel pointers, elapsed times, the printer's own temporary refs) is
// left out. The differential trace ends with these lines for every live slot (docs/reliability.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cused::diff {

// Who is who in a script run: the coordinator knows every slot's pid, thread ids and mapping.
struct Roles {
  std::map<pid_t, std::string> pids;  // 1234 -> "s1"
  std::map<pid_t, std::string> tids;  // 1235 -> "s1.t0"
};

// One slot's state file, to be normalised together with the others (node names cross procs).
struct ProcStateText {
  std::string role;              // "s1"
  std::uint64_t space_base = 0;  // where the slot mapped the device (0: not mapped)
  std::string text;              // the file's contents
};

// The normalised lines of every slot's file, each prefixed with its slot's role.
std::vector<std::string> normalise_proc_states(const std::vector<ProcStateText>& procs,
                                               const Roles& roles);

}  // namespace cused::diff
