// SPDX-License-Identifier: GPL-2.0-only
// One message with at most one descriptor attached (SCM_RIGHTS) on a unix socket: how the CUSE
// mmap shim gets a node's memfd (client/preload, cused/cuse/map_server) and how `cused run` hands
// its seccomp listener to the daemon (cused/run). Header-only: the preload shim links nothing.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace cused::client {

// sendmsg of `size` bytes at `data`, with `fd` attached when it is >= 0; sendmsg's result.
inline ssize_t send_with_fd(int socket, const void* data, std::size_t size, int fd = -1) {
  iovec part{const_cast<void*>(data), size};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    header.msg_control = control;
    header.msg_controllen = sizeof control;
    cmsghdr* rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(rights), &fd, sizeof fd);
  }
  return sendmsg(socket, &header, MSG_NOSIGNAL);
}

// recvmsg of up to `size` bytes into `data`; `fd` gets the attached descriptor (close-on-exec),
// or -1. recvmsg's result.
inline ssize_t receive_with_fd(int socket, void* data, std::size_t size, int& fd) {
  iovec part{data, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr header{};
  header.msg_iov = &part;
  header.msg_iovlen = 1;
  header.msg_control = control;
  header.msg_controllen = sizeof control;
  ssize_t got = recvmsg(socket, &header, MSG_CMSG_CLOEXEC);
  fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return got;
}

}  // namespace cused::client
