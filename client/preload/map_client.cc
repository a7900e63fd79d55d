// SPDX-License-Identifier: GPL-2.0-only
#include "client/preload/map_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "client/fd_message.h"
#include "uapi/cused_cuse.h"

namespace cused::preload {

namespace {

// A daemon that stopped answering fails the mmap instead of hanging it.
constexpr int kDaemonTimeoutSeconds = 5;

int receive_reply(int fd, int* memfd) {
  uapi::CuseMapReply reply{};
  int received = -1;
  ssize_t got = client::receive_with_fd(fd, &reply, sizeof reply, received);
  bool valid = got == static_cast<ssize_t>(sizeof reply) && reply.magic == uapi::kCuseMapMagic;
  int error = !valid ? ENODEV : reply.error;
  if (error == 0 && memfd && received < 0) error = ENODEV;
  if (error == 0 && memfd)
    *memfd = received;
  else if (received >= 0)
    close(received);
  return error;
}

}  // namespace

MapConnection::~MapConnection() {
  if (fd_ >= 0) close(fd_);
}

int MapConnection::connect(const char* socket_path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::size_t length = std::strlen(socket_path);
  if (length >= sizeof address.sun_path) return ENAMETOOLONG;
  std::memcpy(address.sun_path, socket_path, length + 1);
  fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return errno;
  timeval timeout{kDaemonTimeoutSeconds, 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return errno;
  return 0;
}

int MapConnection::request(std::uint64_t token, unsigned prot, std::uint64_t length, int* memfd) {
  uapi::CuseMapRequest message{uapi::kCuseMapMagic, prot, token, length};
  if (send(fd_, &message, sizeof message, MSG_NOSIGNAL) != sizeof message) return ENODEV;
  return receive_reply(fd_, memfd);
}

int MapConnection::report(int error, std::uint64_t address, std::uint64_t length) {
  uapi::CuseMapResult message{uapi::kCuseMapMagic, error, address, length};
  if (send(fd_, &message, sizeof message, MSG_NOSIGNAL) != sizeof message) return ENODEV;
  return receive_reply(fd_, nullptr);
}

}  // namespace cused::preload
