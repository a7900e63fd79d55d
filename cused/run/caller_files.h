// SPDX-License-Identifier: GPL-2.0-only
// core::CallerFiles for a `cused run` caller (core/passed_files.h): the daemon reaches the file
// table of the process whose notification it serves. A sender's fd is taken with pidfd_getfd (the
// kernel's fget), a file is installed in the reader with SECCOMP_IOCTL_NOTIF_ADDFD (O_CLOEXEC,
// as binder_apply_fd_fixups). No system call closes a descriptor of another process, so close()
// answers -ENOSYS (docs/run.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>

#include "core/passed_files.h"
#include "cused/run/session.h"

namespace cused::run {

class CallerFiles final : public core::CallerFiles {
 public:
  CallerFiles(std::shared_ptr<Session> session, std::uint64_t id, pid_t tgid)
      : session_(std::move(session)), id_(id), tgid_(tgid) {}

  std::unique_ptr<core::PassedFile> take(int fd, int& error) override;
  int install(const core::PassedFile& file) override;
  int close(int fd) override;

 private:
  std::shared_ptr<Session> session_;
  std::uint64_t id_;  // the notification: it names the process the kernel installs into
  pid_t tgid_;
};

}  // namespace cused::run
