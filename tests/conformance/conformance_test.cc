// SPDX-License-Identifier: GPL-2.0-only
// conformance [gtest flags] DEVICE: raw-ioctl checks of binder semantics (spec S1-S9, the
// canonical sequences of S3.6) against any binder device: the kernel's /dev/binder in the
// tests/vm guest, or a cused mount. Every expectation is the kernel's; the roles of a test
// (context manager, server, client) are separate forked processes, each with its own open. The
// tests are in one file per spec section (ioctls_test.cc, transactions_test.cc, ...).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/conformance/device_path.h"

namespace cused::conformance {
namespace {

std::string g_device;  // argv[1]

}  // namespace

const std::string& DevicePath() { return g_device; }

}  // namespace cused::conformance

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s [gtest flags] DEVICE (e.g. /dev/binder)\n", argv[0]);
    return 2;
  }
  cused::conformance::g_device = argv[1];
  return RUN_ALL_TESTS();
}
