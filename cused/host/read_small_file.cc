// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/read_small_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace cused::host {

int read_small_file(const std::string& path, std::string& out, std::size_t limit) noexcept {
  out.clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int error = 0;
  try {
    out.resize(limit);
  } catch (...) {
    ::close(fd);
    return ENOMEM;
  }
  std::size_t used = 0;
  while (used < limit) {
    ssize_t got = ::read(fd, out.data() + used, limit - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) error = errno;
    if (got <= 0) break;
    used += static_cast<std::size_t>(got);
  }
  ::close(fd);
  out.resize(error ? 0 : used);
  return error;
}

}  // namespace cused::host
