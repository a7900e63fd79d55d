// SPDX-License-Identifier: GPL-2.0-only
#include "cused/cuse/map_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "client/fd_message.h"
#include "cused/request/failures.h"
#include "uapi/cused_cuse.h"

namespace cused::cuse {

namespace {

// A peer that connects and then says nothing holds the (single) server thread at most this long.
constexpr int kPeerTimeoutMs = 2000;

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void set_timeouts(int fd) {
  timeval timeout{kPeerTimeoutMs / 1000, (kPeerTimeoutMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

template <typename Message>
bool receive(int fd, Message& message) {
  ssize_t got = recv(fd, &message, sizeof message, 0);
  return got == static_cast<ssize_t>(sizeof message) && message.magic == uapi::kCuseMapMagic;
}

// The reply, with `fd` attached as SCM_RIGHTS when it is >= 0.
void reply(int connection, int error, int fd = -1) {
  uapi::CuseMapReply message{uapi::kCuseMapMagic, error};
  client::send_with_fd(connection, &message, sizeof message, fd);
}

}  // namespace

MapServer::MapServer(std::string path, Lookup lookup)
    : path_(std::move(path)), lookup_(std::move(lookup)) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path_.size() >= sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    fail("socket " + path_);
  }
  std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
  listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) fail("socket");
  unlink(path_.c_str());  // a socket a dead daemon left behind
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      chmod(path_.c_str(), 0666) != 0 || listen(listen_fd_, 64) != 0) {
    int err = errno;
    close(listen_fd_);
    errno = err;
    fail("socket " + path_);
  }
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) {
    int err = errno;
    close(listen_fd_);
    unlink(path_.c_str());
    errno = err;
    fail("eventfd");
  }
  thread_ = std::thread([this] { run(); });
}

MapServer::~MapServer() {
  std::uint64_t one = 1;
  if (write(stop_fd_, &one, sizeof one) != sizeof one) std::terminate();  // cannot stop the thread
  thread_.join();
  close(stop_fd_);
  close(listen_fd_);
  unlink(path_.c_str());
}

void MapServer::run() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    int connection = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    set_timeouts(connection);
    // The peer sees its connection closed: its mmap fails (map_client.cc: ENODEV).
    run_guarded(
        RequestEntry::kCuse, "map", [&] { serve(connection); }, [](int) {});
    close(connection);
  }
}

void MapServer::serve(int connection) {
  ucred peer{};
  socklen_t peer_size = sizeof peer;
  if (getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &peer_size) != 0) return;
  uapi::CuseMapRequest request{};
  if (!receive(connection, request)) return;
  std::shared_ptr<ShimMapping> mapping = lookup_(request.token);
  // An unknown token is an open that is gone (or never was): binder_mmap's EINVAL as well.
  int error = mapping ? mapping->begin(peer.pid, request.prot) : EINVAL;
  if (error != 0) return reply(connection, error);
  reply(connection, 0, mapping->readonly_fd());
  uapi::CuseMapResult result{};
  if (!receive(connection, result) || result.error != 0 || result.length == 0) {
    mapping->abort();  // a failed mmap does not use up the only one (S1.4)
    return reply(connection, result.error != 0 ? result.error : EINVAL);
  }
  mapping->commit({result.address, static_cast<std::size_t>(result.length), false});
  reply(connection, 0);
}

}  // namespace cused::cuse
