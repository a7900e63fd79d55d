// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/attach.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "client/fd_message.h"
#include "cused/run/run_server.h"
#include "cused/run/seccomp_filter.h"
#include "uapi/cused_run.h"

namespace cused::run {

namespace {

// A connection to the run socket of the daemon serving `mount`, or -1.
int connect_to_run_socket(const std::string& mount) {
  struct stat st {};
  if (stat(mount.c_str(), &st) != 0) return -1;
  std::string path = socket_path_for(st.st_dev);
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

ucred peer_of(int fd) {
  ucred peer{};
  socklen_t size = sizeof peer;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) peer.pid = 0;
  return peer;
}

}  // namespace

std::optional<pid_t> serving_daemon(const std::string& mount) {
  int fd = connect_to_run_socket(mount);
  if (fd < 0) return std::nullopt;
  pid_t pid = peer_of(fd).pid;
  close(fd);
  return pid > 0 ? std::optional(pid) : std::nullopt;
}

int connect_to_daemon(const std::string& mount) {
  int fd = connect_to_run_socket(mount);
  if (fd < 0) return -1;
  // The listener grants power over the program: only to a daemon run by root or by us.
  ucred peer = peer_of(fd);
  if (peer.pid <= 0 || (peer.uid != 0 && peer.uid != geteuid())) {
    close(fd);
    return -1;
  }
  return fd;
}

int hand_over(int connection, int listener) {
  uapi::RunAttach message{uapi::kRunMagic, getpid()};
  if (client::send_with_fd(connection, &message, sizeof message, listener) !=
      static_cast<ssize_t>(sizeof message))
    return errno;
  uapi::RunAttachReply reply{};
  if (recv(connection, &reply, sizeof reply, 0) != static_cast<ssize_t>(sizeof reply) ||
      reply.magic != uapi::kRunMagic)
    return ECONNRESET;
  return reply.error;
}

int serve_me_by(const std::string& mount) {
  int connection = connect_to_daemon(mount);
  if (connection < 0) return ECONNREFUSED;
  int listener = install_binder_ioctl_filter();
  int err = listener < 0 ? -listener : hand_over(connection, listener);
  if (listener >= 0) close(listener);
  close(connection);
  return err;
}

}  // namespace cused::run
