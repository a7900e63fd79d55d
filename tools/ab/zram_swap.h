// SPDX-License-Identifier: GPL-2.0-only
// Swap for a block's memory cgroup (conditions.memcg.zram): compressed in memory, as on Android,
// so that the cgroup's reclaim swaps rather than kills. The machine's own swap is used when it has
// some; else a zram device is added, and removed (swapoff, hot_remove) with the block, also on
// Ctrl-C.
#pragma once

#include <optional>

#include "tools/ab/stop_signals.h"

namespace cused::tools::ab {

class ZramSwap {
 public:
  // Nothing when the machine already swaps; else a 4 GiB zram device swapped to. Throws
  // std::runtime_error when there is neither swap nor /sys/class/zram-control.
  ZramSwap();
  ~ZramSwap();
  ZramSwap(const ZramSwap&) = delete;
  ZramSwap& operator=(const ZramSwap&) = delete;

  // The zram device's number, if one was added.
  std::optional<int> device() const { return device_; }

 private:
  static void make_swap(int device);

  std::optional<int> device_;
  std::optional<StopCleanup> on_stop_signal_;
};

}  // namespace cused::tools::ab
