// SPDX-License-Identifier: GPL-2.0-only
// The kernel side of one CUSE device: the /dev/cuse channel that makes /dev/NAME exist while it is
// open, and the threads that serve its requests.
//
// Each worker blocks in read() on the channel, where the kernel wakes one reader per request (as
// libfuse's own loop does). Binder requests never hold a worker (a read with no work parks in
// core), so a few workers serve any number of client threads. libfuse's loop cannot be used:
// its threads cannot be woken from read() to stop, since CUSE has no unmount; BlockingWorkers
// interrupts each worker's read with a signal until it has left.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cused/cuse/cuse.h"
#include "cused/request/blocking_workers.h"

namespace cused::cuse {

class Device;

struct SessionOptions {
  unsigned threads = 4;
  // The node's owner and permissions (devtmpfs makes it root:root 0600, as binderfs does).
  mode_t mode = 0600;
  uid_t uid = 0;
  gid_t gid = 0;
  bool debug = false;
};

class Session {
 public:
  // Creates /dev/<device.name()> and serves it. Throws std::runtime_error with a message a user
  // can act on: no CUSE in this kernel (use the binderfs frontend), not root, name taken.
  Session(Device& device, const SessionOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Stops the workers; no request is served after it returns. The session (and its poll handles)
  // still exist until destruction.
  void stop();
  const std::string& node_path() const { return node_path_; }

 private:
  void serve_init();
  void prepare_node(const SessionOptions& options);
  void work(const std::atomic<bool>& stopping);

  const std::string node_path_;
  fuse_session* session_ = nullptr;
  BlockingWorkers workers_;
};

}  // namespace cused::cuse
