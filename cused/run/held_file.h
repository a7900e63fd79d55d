// SPDX-License-Identifier: GPL-2.0-only
// A sender's file as the daemon holds it between a transaction's send and its delivery (a dup
// taken with pidfd_getfd, the kernel's fget): closed when the driver lets it go (fput).
#pragma once

#include <unistd.h>

#include "core/passed_files.h"
#include "cused/own_closes.h"

namespace cused::run {

class HeldFile final : public core::PassedFile {
 public:
  explicit HeldFile(int fd) : fd_(fd) {}
  ~HeldFile() override {
    OwnClose own;  // not a client's close (own_closes.h)
    ::close(fd_);
  }
  HeldFile(const HeldFile&) = delete;
  HeldFile& operator=(const HeldFile&) = delete;
  int fd() const { return fd_; }

 private:
  const int fd_;
};

}  // namespace cused::run
