// SPDX-License-Identifier: GPL-2.0-only
// The daemon's end of the mmap socket of one CUSE device (uapi/cused_cuse.h has the protocol,
// docs/cuse.md the why). One thread accepts connections and answers them in turn; each
// connection is one mmap of the shim. The memfd goes only to the process that opened the node:
// the peer's SO_PEERCRED pid must be the proc's owner.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "cused/cuse/shim_mapping.h"

namespace cused::cuse {

class MapServer {
 public:
  // The open named by a token from CUSED_CUSE_GET_MAP_TOKEN; null when there is none.
  using Lookup = std::function<std::shared_ptr<ShimMapping>(std::uint64_t token)>;

  // Listens on `path` (a stale socket there is replaced), reachable by every user: the
  // credential check, not the file mode, decides who gets a memfd. Throws std::system_error.
  MapServer(std::string path, Lookup lookup);
  ~MapServer();
  MapServer(const MapServer&) = delete;
  MapServer& operator=(const MapServer&) = delete;

  const std::string& path() const { return path_; }

 private:
  void run();
  void serve(int connection);

  const std::string path_;
  const Lookup lookup_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: ends run()
  std::thread thread_;
};

}  // namespace cused::cuse
