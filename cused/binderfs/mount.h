// SPDX-License-Identifier: GPL-2.0-only
// A FUSE session serving a Filesystem at a mount point: mounting (after cleaning a stale mount a
// crashed daemon left behind), the multi-threaded request loop, and unmounting.
#pragma once

#include <string>
#include <thread>

#include "cused/binderfs/filesystem.h"
#include "cused/fuse/fuse.h"

namespace cused::binderfs {

struct MountOptions {
  std::string mountpoint;
  bool allow_other = false;     // let users other than the mounter reach the nodes
  bool io_uring = false;        // FUSE over io_uring (Linux >= 6.14, fuse enable_uring=1)
  unsigned io_uring_depth = 0;  // ring entries per queue; 0 = cused's default
  unsigned max_threads = 0;     // worker threads of the loop; 0 = libfuse's default
  bool debug = false;
};

class Mount {
 public:
  // Throws std::runtime_error with a message a user can act on.
  Mount(Filesystem& filesystem, MountOptions options);
  ~Mount();
  Mount(const Mount&) = delete;
  Mount& operator=(const Mount&) = delete;

  // Serves requests until the session ends (signal, stop(), or unmount). Returns libfuse's result.
  int serve();
  // Serves on a background thread (tests, in-process use); stop() ends it.
  void serve_in_background();
  void stop();

  fuse_session* session() const { return session_; }
  const std::string& mountpoint() const { return options_.mountpoint; }

 private:
  Filesystem& filesystem_;
  MountOptions options_;
  fuse_session* session_ = nullptr;
  bool mounted_ = false;
  std::thread background_;
};

// If `path` is a FUSE mount whose daemon is gone (ENOTCONN), detach it. Returns true if it did.
bool clean_stale_mount(const std::string& path);

}  // namespace cused::binderfs
