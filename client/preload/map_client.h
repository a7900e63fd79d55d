// SPDX-License-Identifier: GPL-2.0-only
// The shim's end of a CUSE device's mmap socket (uapi/cused_cuse.h has the protocol): one
// connection per mmap. Every call returns 0 or a positive errno, the one the shim's mmap fails
// with; nothing here allocates.
#pragma once

#include <cstdint>

namespace cused::preload {

class MapConnection {
 public:
  MapConnection() = default;
  ~MapConnection();
  MapConnection(const MapConnection&) = delete;
  MapConnection& operator=(const MapConnection&) = delete;

  int connect(const char* socket_path);
  // Asks for the memfd of the open named by `token`; on success `*memfd` is a new descriptor,
  // read-only and close-on-exec.
  int request(std::uint64_t token, unsigned prot, std::uint64_t length, int* memfd);
  // Tells the daemon how the mmap of that memfd went (`error` 0: mapped at address) and waits
  // until it has recorded the mapping, so that a transaction sent right after the mmap returns
  // finds the proc mapped.
  int report(int error, std::uint64_t address, std::uint64_t length);

 private:
  int fd_ = -1;
};

}  // namespace cused::preload
