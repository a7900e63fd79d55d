// SPDX-License-Identifier: GPL-2.0-only
// Random differential scripts (tests/fuzz/script.h bytes), biased to where drivers differ: a
// manager, servers and clients that publish and fetch nodes, then a random walk over sync and
// oneway calls with objects, nested calls, refcounts, death notifications, buffer frees, looper
// commands, thread exits, signals, flushes and procs dying in the middle of all of it.
#pragma once

#include <cstdint>
#include <vector>

namespace cused::diff {

// The same seed gives the same script.
std::vector<std::uint8_t> generate_script(std::uint64_t seed, int actions);

}  // namespace cused::diff
