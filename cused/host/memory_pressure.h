// SPDX-License-Identifier: GPL-2.0-only
// The daemon's memory-pressure signals for the shrinker (pressure_source.h, docs/design.md
// section 4): a PSI trigger on /proc/pressure/memory, and the memory.events file of the daemon's
// cgroup v2 when that cgroup has a limit.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cused/host/pressure_source.h"
#include "cused/host/shrinker_thread.h"

namespace cused::host {

// 150 ms of stall within 2 s; unprivileged triggers need a window that is a multiple of 2 s.
inline constexpr std::string_view kDefaultPsiTrigger = "some 150000 2000000";

// Adds the PSI trigger and the cgroup's memory.events to `options`' sources, each where the host
// has it, and to its `unavailable` the reason for each it has not.
void add_memory_pressure_sources(ShrinkerOptions& options,
                                 std::string_view psi_trigger = kDefaultPsiTrigger);

// A PSI trigger; nullptr with `why_not` set when the kernel refuses (no PSI, psi=0 on the command
// line, permission, a malformed trigger).
std::unique_ptr<PressureSource> open_psi_trigger(std::string_view trigger, std::string& why_not);

// The memory.events of the daemon's own cgroup v2, when that cgroup (or one above it) has a
// memory.high or memory.max limit. nullptr with `why_not` otherwise.
std::unique_ptr<PressureSource> open_cgroup_memory_events(std::string& why_not);

// The pieces of the cgroup lookup, separated for tests.
// The cgroup2 mount point from /proc/self/mountinfo text.
std::optional<std::string> cgroup2_mount_point(std::string_view mountinfo);
// The v2 path ("0::/path" line) from /proc/self/cgroup text.
std::optional<std::string> cgroup2_path(std::string_view proc_self_cgroup);
// The closest directory from `dir` up to `root` whose memory.high or memory.max is not "max".
std::optional<std::string> limited_cgroup_dir(const std::string& root, const std::string& dir);

struct MemoryEvents {
  std::uint64_t high = 0;  // times usage went over memory.high (throttled, reclaimed)
  std::uint64_t max = 0;   // times usage hit memory.max
  std::uint64_t oom = 0;
};
MemoryEvents parse_memory_events(std::string_view text);
// Whether `now` has more high/max/oom events than `before`: the cgroup is under pressure.
bool pressure_rose(const MemoryEvents& before, const MemoryEvents& now);

}  // namespace cused::host
