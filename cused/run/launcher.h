// SPDX-License-Identifier: GPL-2.0-only
// `cused run [--mount DIR] [--device NAME[:SPEC]]... [--variant SPEC]
// [--servicemanager[=PROGRAM]] -- PROGRAM ARGS...` (docs/run.md): runs an unmodified program whose
// binder ioctls the daemon serving DIR answers through seccomp user notifications.
//
// If DIR is served by a running cused, the program attaches to it (and can talk to that daemon's
// FUSE-path clients); otherwise `cused run` starts a daemon on DIR (a temporary directory without
// --mount) for the program's lifetime. The program runs in a mount namespace of its own whose
// /dev has the mount's devices (private_dev.h), under the filter of seccomp_filter.h; its threads
// and children inherit both, exec keeps them.
//
// Stopping: SIGTERM, SIGINT and SIGHUP sent to the launcher go on to the program (not the
// terminal's, which reach the program directly); a daemon the
// launcher started runs in a process group of its own, so that a signal to the launcher's group
// (a terminal's Ctrl-C, timeout(1)) reaches the program only. Once the program has ended, the
// servicemanager and then the daemon are stopped, the mount is detached if the daemon died
// without unmounting, and only then is the temporary directory removed.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cused::run {

// Set in the program's environment to the mount that serves it.
inline constexpr char kRunEnvironment[] = "CUSED_RUN";

struct RunOptions {
  std::string mount;                 // empty: a temporary directory with a daemon of its own
  std::vector<std::string> devices;  // --device for a daemon `cused run` starts
  std::string variant;               // --variant for it
  // --servicemanager[=PROGRAM]: a context manager started before the program; empty: the
  // default (context_manager.h).
  std::optional<std::string> servicemanager;
  std::vector<std::string> command;  // PROGRAM ARGS...
  std::string daemon;                // the cused binary (this one)
};

// Runs the program and returns what its exit should be: its exit status, 128 + the signal that
// killed it (also when a stop signal came before the program started), or 125-127 when cused run
// failed (125), the program could not be run (126) or found (127), as env(1) does.
int launch(const RunOptions& options);

}  // namespace cused::run
