// SPDX-License-Identifier: GPL-2.0-only
// cused's binder trace events for a script against the kernel's (docs/reliability.md, "Trace
// events"), both normalised by event_lines.h: task by task, since one thread's events come in
// an order its driver decides, while how two threads' events interleave is the scheduler's.
// Each task's events are the same, in the same order, or differ where a documented deviation of
// docs/tracing.md explains it (event_deviations.h), or the script's events diverged. Events of
// no script task ("other": the kernel's kworker running a deferred release, cused's own
// threads) are counted and not compared.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cused::diff {

struct EventVerdict {
  std::size_t tasks = 0;                // script tasks with events on either side
  std::size_t compared = 0;             // the kernel's events compared (the same, or documented)
  std::size_t not_compared = 0;         // the kernel's events of no script task
  std::vector<std::string> documented;  // "name: task, kernel's event N"
  bool diverged = false;
  std::string task;           // the first task whose events diverged
  std::size_t event = 0;      // its first differing event, from 1 (the kernel's)
  std::string kernel, cused;  // the two events there ("(end)" past the last)
};

EventVerdict compare_events(const std::vector<std::string>& kernel,
                            const std::vector<std::string>& cused);

}  // namespace cused::diff
