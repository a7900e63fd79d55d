// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/listener.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

namespace cused::run {

Listener::~Listener() { close(fd_); }

void Listener::close_for_programs() const {
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0) return;
  dup3(null, fd_, O_CLOEXEC);  // drops the listener file: the kernel sees it closed
  close(null);
}

std::optional<seccomp_notif> Listener::receive() const {
  seccomp_notif notification{};
  if (ioctl(fd_, SECCOMP_IOCTL_NOTIF_RECV, &notification) != 0) return std::nullopt;
  return notification;
}

int Listener::answer(std::uint64_t id, long result) const {
  seccomp_notif_resp response{};
  response.id = id;
  response.val = result >= 0 ? result : 0;
  response.error = result < 0 ? static_cast<__s32>(result) : 0;
  return ioctl(fd_, SECCOMP_IOCTL_NOTIF_SEND, &response) == 0 ? 0 : -errno;
}

int Listener::continue_syscall(std::uint64_t id) const {
  seccomp_notif_resp response{};
  response.id = id;
  response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  return ioctl(fd_, SECCOMP_IOCTL_NOTIF_SEND, &response) == 0 ? 0 : -errno;
}

bool Listener::wake_synchronously() const {
  // <linux/seccomp.h> of Linux >= 6.6.
  constexpr unsigned long kSetFlags = SECCOMP_IOW(4, __u64);
  constexpr __u64 kSyncWakeUp = 1;
  return ioctl(fd_, kSetFlags, kSyncWakeUp) == 0;
}

bool Listener::valid(std::uint64_t id) const {
  return ioctl(fd_, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

int Listener::add_fd(std::uint64_t id, int fd, unsigned flags) const {
  seccomp_notif_addfd add{};
  add.id = id;
  add.srcfd = static_cast<__u32>(fd);
  add.newfd_flags = flags;
  int installed = ioctl(fd_, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
  return installed < 0 ? -errno : installed;
}

}  // namespace cused::run
