// SPDX-License-Identifier: GPL-2.0-only
// Going to the background the way a daemon with threads must: fork before any thread exists
// (threads do not survive fork, so libfuse's fuse_daemonize after mounting would lose the
// shrinker and interrupt threads), and keep the caller waiting until the child has mounted, so
// that a mount error still reaches the terminal and the exit status.
#pragma once

#include <string>

namespace cused {

class Background {
 public:
  // In the parent: waits for the child's verdict and exits with it, after saying, once the child
  // serves, what it serves (`what`) and its pid, so that the user can stop it. In the child:
  // returns.
  explicit Background(const std::string& what);
  // The child is serving: detach from the terminal and let the parent exit 0.
  void ready();
  // The child failed to start (it already printed why): the parent exits 1.
  void failed();

 private:
  int report_fd_ = -1;
};

}  // namespace cused
