// SPDX-License-Identifier: GPL-2.0-only
// One slot of a differential script (tests/diff/coordinator.h): a forked process with the device
// open and mapped, and kThreads threads that issue the ioctls the coordinator sends, each
// answering with one trace line when its call returns. Parked reads stay parked in their thread
// until the driver answers them or the coordinator signals the thread (S1.12).
#pragma once

#include <cstddef>
#include <string>

namespace cused::diff {

struct SlotOptions {
  std::string device;
  std::size_t space = 0;  // bytes to map; 0: never mapped (S1.7)
  bool nonblock = false;  // O_NONBLOCK at open (S1.11: what both paths honour)
};

// Runs in the forked child on `socket`; ends the process when the coordinator goes away.
[[noreturn]] void run_slot(int socket, const SlotOptions& options);

}  // namespace cused::diff
