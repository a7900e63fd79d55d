// SPDX-License-Identifier: GPL-2.0-only
// A memory-pressure signal that wakes the shrinker's thread (docs/design.md section 4): a file
// descriptor cused/host/shrinker_thread.h polls. The daemon's (a PSI trigger, the cgroup's
// memory.events) are opened by cused/host/memory_pressure.h.
#pragma once

#include <string_view>

namespace cused::host {

class PressureSource {
 public:
  virtual ~PressureSource() = default;
  virtual std::string_view name() const = 0;
  virtual int fd() const = 0;
  // The poll(2) events that mean "look at me".
  virtual short events() const = 0;
  // Called after poll reported events(): re-arms the source and says whether this was pressure.
  virtual bool consume() = 0;
};

}  // namespace cused::host
