// SPDX-License-Identifier: GPL-2.0-only
// How much of an ioctl's argument binder_ioctl reads and writes, per command (S0.1, S2). A
// frontend that sees the caller's raw argument (CUSE, cused run) copies exactly this much, so an
// argument the kernel never touches may be anything, NULL included: libbinder's thread exit is
// ioctl(fd, BINDER_THREAD_EXIT, 0), Android 10's servicemanager ioctl(fd, BINDER_SET_CONTEXT_MGR,
// 0). A copy-in that fails is passed to Proc::ioctl as an empty argument, which answers with the
// kernel's errno for that command (EINVAL or EFAULT); a failed copy-out is `copy_out_errno`.
#pragma once

#include <cerrno>
#include <cstddef>

namespace cused::core {

struct IoctlArgument {
  std::size_t copy_in = 0;   // bytes copy_from_user reads
  std::size_t copy_out = 0;  // bytes copy_to_user / put_user writes back on success
  int copy_out_errno = EFAULT;  // BINDER_VERSION's put_user failure is EINVAL
};

// binder_ioctl's use of the argument of `cmd`; nothing in, nothing out for commands it does not
// know (they fail with EINVAL before any copy).
IoctlArgument kernel_ioctl_argument(unsigned cmd);

}  // namespace cused::core
