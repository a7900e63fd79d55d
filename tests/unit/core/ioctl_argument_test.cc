// SPDX-License-Identifier: GPL-2.0-only
// core/ioctl_argument.cc: how much of each ioctl's argument binder_ioctl reads and writes (S0.1,
// S2), which the frontends copy.
#include "core/ioctl_argument.h"

#include <gtest/gtest.h>

#include "uapi/binder.h"

namespace cused::core::test {
namespace {

// S0.1, S2: what binder_ioctl copies for each command. The two that Android calls with NULL
// (libbinder's thread exit, Android 10's servicemanager) read nothing; so does every command it
// refuses with EINVAL. No argument is larger than the frontends' buffer for it.
TEST(IoctlArgument, KernelArgumentCopiesMatchBinderIoctl_S0_1_S2) {
  for (unsigned cmd : std::initializer_list<unsigned>{BINDER_THREAD_EXIT, BINDER_SET_CONTEXT_MGR,
                                                      BINDER_SET_IDLE_TIMEOUT, 0xc0046299u}) {
    IoctlArgument argument = kernel_ioctl_argument(cmd);
    EXPECT_EQ(argument.copy_in, 0u) << std::hex << cmd;
    EXPECT_EQ(argument.copy_out, 0u) << std::hex << cmd;
  }
  EXPECT_EQ(kernel_ioctl_argument(BINDER_VERSION).copy_in, 0u) << "put_user only";
  EXPECT_EQ(kernel_ioctl_argument(BINDER_VERSION).copy_out_errno, EINVAL);
  EXPECT_EQ(kernel_ioctl_argument(BINDER_GET_EXTENDED_ERROR).copy_in, 0u) << "copy_to_user only";
  EXPECT_EQ(kernel_ioctl_argument(BINDER_SET_MAX_THREADS).copy_out, 0u);
  for (unsigned cmd :
       std::initializer_list<unsigned>{BINDER_WRITE_READ, BINDER_GET_NODE_INFO_FOR_REF,
                                       BINDER_GET_NODE_DEBUG_INFO, BINDER_GET_FROZEN_INFO}) {
    IoctlArgument argument = kernel_ioctl_argument(cmd);
    EXPECT_EQ(argument.copy_in, _IOC_SIZE(cmd));
    EXPECT_EQ(argument.copy_out, _IOC_SIZE(cmd));
    EXPECT_LE(argument.copy_in, sizeof(binder_write_read));
  }
}

}  // namespace
}  // namespace cused::core::test
