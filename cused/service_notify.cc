// SPDX-License-Identifier: GPL-2.0-only
#include "cused/service_notify.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cused {

namespace {

// Closes the socket whichever way the function returns.
struct Socket {
  int fd;
  ~Socket() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

bool notify_service_manager(const std::string& state) {
  const char* name = std::getenv("NOTIFY_SOCKET");
  if (name == nullptr || *name == '\0') return true;
  std::string path = name;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if ((path[0] != '/' && path[0] != '@') || path.size() >= sizeof address.sun_path) {
    std::fprintf(stderr, "cused: NOTIFY_SOCKET=%s is not an AF_UNIX socket path\n", name);
    return false;
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  if (path[0] == '@') address.sun_path[0] = '\0';  // abstract: no terminating NUL counts
  auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() +
                                       (path[0] == '/' ? 1 : 0));
  Socket socket_fd{socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  if (socket_fd.fd < 0 || sendto(socket_fd.fd, state.data(), state.size(), MSG_NOSIGNAL,
                                 reinterpret_cast<const sockaddr*>(&address), length) < 0) {
    std::fprintf(stderr, "cused: cannot notify %s: %s\n", name, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace cused
