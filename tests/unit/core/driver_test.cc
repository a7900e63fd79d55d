// SPDX-License-Identifier: GPL-2.0-only
// core/driver.cc: what the kernel keeps in globals: the list of every proc of every device, which
// BINDER_FREEZE and the logs walk (S1.9, S2.10).
#include <gtest/gtest.h>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using DriverTest = World;

// S1.9 step 1 / S2.10: the driver's list of procs (every device) loses a proc at release.
TEST_F(DriverTest, DriverListsLiveProcsByPid_S1_9) {
  Env other_device_env;  // a second driver: its procs are not ours
  Client second_open{env, kClient};
  EXPECT_EQ(env.driver->procs_of(kClient).size(), 2u);
  EXPECT_EQ(env.driver->proc_count(), 4u);
  client.release();
  EXPECT_EQ(env.driver->procs_of(kClient).size(), 1u);
  EXPECT_TRUE(other_device_env.driver->procs_of(kClient).empty());
}

}  // namespace
}  // namespace cused::core::test
