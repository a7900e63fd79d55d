// SPDX-License-Identifier: GPL-2.0-only
// The socket between `cused run` and the daemon it attaches to (docs/run.md).
//
// A daemon serving a mount listens on <kRunSocketDir>/mount-<major>:<minor>.sock, the device
// number of its mount (stat() of the mount point gives it to the launcher), SOCK_SEQPACKET:
//
//   launcher -> daemon  RunAttach {magic, pid of the program} with SCM_RIGHTS: the seccomp
//                       listener of the program's filter, then a pidfd of the program
//   daemon -> launcher  RunAttachReply {magic, error}: 0 once the daemon serves the listener
//
// The daemon takes a listener only from a peer whose SO_PEERCRED uid is root or the daemon's own;
// the listener answers only the program's own system calls, so handing it over grants the daemon
// power over that program alone.
#pragma once

#include <cstdint>

namespace cused::uapi {

inline constexpr char kRunSocketDir[] = "/run/cused";
inline constexpr std::uint32_t kRunMagic = 0x72756e31;  // "run1"

struct RunAttach {
  std::uint32_t magic;
  std::int32_t pid;  // the program's pid (in the daemon's pid namespace)
};

struct RunAttachReply {
  std::uint32_t magic;
  std::int32_t error;  // 0, or a positive errno the launcher reports
};

static_assert(sizeof(RunAttach) == 8 && sizeof(RunAttachReply) == 8);

}  // namespace cused::uapi
