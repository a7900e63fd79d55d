// SPDX-License-Identifier: GPL-2.0-only
// cused's CUSE frontend ABI (docs/cuse.md): the ioctl that names one open of a cused CUSE node,
// and the messages of the mmap socket between the LD_PRELOAD shim (client/preload) and the daemon.
//
// CUSE has no mmap, so the shim maps the open's memfd itself. It asks the daemon for it on the
// device's socket (SOCK_SEQPACKET, <socket dir>/<NAME>.sock), one connection per mmap:
//
//   shim -> daemon  CuseMapRequest {token from CUSED_CUSE_GET_MAP_TOKEN, prot, length}
//   daemon -> shim  CuseMapReply {error}; error 0 carries the memfd (read-only) as SCM_RIGHTS
//   shim -> daemon  CuseMapResult {error of the shim's own mmap, address, length}
//   daemon -> shim  CuseMapReply {error}: the mapping is recorded (0) or refused
//
// The daemon answers the first request only when the peer's SO_PEERCRED pid is the process that
// opened the node (binder_mmap's EINVAL rule, S1.4), so the token names an open but grants nothing.
#pragma once

#include <linux/types.h>
#include <sys/ioctl.h>

#include <cstdint>

namespace cused::uapi {

struct cused_cuse_map_token {
  __u64 token;
};

// 'b' is binder's ioctl type; 0xc0 is far above binder's numbers (1 to 0x11), so the kernel's
// driver and cused's core answer it with EINVAL like any unknown ioctl.
inline constexpr unsigned CUSED_CUSE_GET_MAP_TOKEN = _IOR('b', 0xc0, cused_cuse_map_token);

// Where the daemon puts NAME.sock unless told otherwise (cused --cuse-socket-dir; the shim reads
// CUSED_CUSE_SOCKET_DIR).
inline constexpr char kCuseSocketDir[] = "/run/cused";
inline constexpr char kCuseSocketDirEnv[] = "CUSED_CUSE_SOCKET_DIR";

inline constexpr std::uint32_t kCuseMapMagic = 0x63757365;  // "cuse"

struct CuseMapRequest {
  std::uint32_t magic;
  std::uint32_t prot;  // the mmap's PROT_* bits
  std::uint64_t token;
  std::uint64_t length;
};

struct CuseMapReply {
  std::uint32_t magic;
  std::int32_t error;  // 0 or a positive errno, what the shim's mmap fails with
};

struct CuseMapResult {
  std::uint32_t magic;
  std::int32_t error;  // 0: mapped at [address, address + length); else the mmap's errno
  std::uint64_t address;
  std::uint64_t length;
};

static_assert(sizeof(CuseMapRequest) == 24 && sizeof(CuseMapReply) == 8);
static_assert(sizeof(CuseMapResult) == 24);
static_assert(CUSED_CUSE_GET_MAP_TOKEN == 0x800862c0u);

}  // namespace cused::uapi
