// SPDX-License-Identifier: GPL-2.0-only
// The launcher's side of the run socket (uapi/cused_run.h), for `cused run` and for programs that
// put themselves under a daemon (bench-transport, tests): find the daemon serving a mount, put the
// calling process under the filter, hand the listener over.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace cused::run {

// A connection to the run socket of the daemon serving `mount`, or -1 (none, or its owner is
// neither root nor the caller: the listener grants power over the program).
int connect_to_daemon(const std::string& mount);

// The pid of the daemon whose run socket serves `mount` (SO_PEERCRED), whoever runs it; nullopt
// if none answers.
std::optional<pid_t> serving_daemon(const std::string& mount);

// Sends `listener` over `connection` and waits for the daemon to take it; 0 or an errno.
int hand_over(int connection, int listener);

// In the calling process: installs the filter and hands its listener to the daemon serving
// `mount`. From then on its binder ioctls (and its threads' and children's) are the daemon's.
// 0, or an errno.
int serve_me_by(const std::string& mount);

}  // namespace cused::run
