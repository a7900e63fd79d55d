// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/event_compare.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "tests/diff/event_deviations.h"
#include "tests/diff/event_lines.h"

namespace cused::diff {

namespace {

using Tasks = std::map<std::string, std::vector<std::string>, std::less<>>;

// Each script task's events ("binder_ioctl: ..."), in order; "other" left out and counted.
Tasks by_task(const std::vector<std::string>& events, std::size_t* others) {
  Tasks tasks;
  for (const auto& line : events) {
    std::string_view role = event_role(line);
    if (role == "other") {
      if (others) (*others)++;
      continue;
    }
    tasks[std::string(role)].emplace_back(event_text(line));
  }
  return tasks;
}

const std::string& at_or_end(const std::vector<std::string>& events, std::size_t i) {
  static const std::string end = "(end)";
  return i < events.size() ? events[i] : end;
}

// One task's events; false (and the verdict's divergence filled) at the first difference no
// documented deviation explains.
bool compare_task(const std::string& task, const std::vector<std::string>& kernel,
                  const std::vector<std::string>& cused, EventVerdict& v) {
  std::size_t k = 0, c = 0;
  while (k < kernel.size() || c < cused.size()) {
    if (k < kernel.size() && c < cused.size() && kernel[k] == cused[c]) {
      k++, c++, v.compared++;
      continue;
    }
    auto known = known_event_deviation(kernel, k, cused, c);
    if (!known) {
      v.diverged = true;
      v.task = task, v.event = k + 1;
      v.kernel = at_or_end(kernel, k), v.cused = at_or_end(cused, c);
      return false;
    }
    v.documented.push_back(fmt::format("{}: {}, event {}", known->name, task, k + 1));
    v.compared += known->kernel_events;
    k += known->kernel_events;
    c += known->cused_events;
  }
  return true;
}

}  // namespace

EventVerdict compare_events(const std::vector<std::string>& kernel,
                            const std::vector<std::string>& cused) {
  EventVerdict v;
  Tasks kernel_tasks = by_task(kernel, &v.not_compared);
  Tasks cused_tasks = by_task(cused, nullptr);
  std::set<std::string> names;
  for (const auto& [task, events] : kernel_tasks) names.insert(task);
  for (const auto& [task, events] : cused_tasks) names.insert(task);
  static const std::vector<std::string> none;
  for (const auto& task : names) {
    v.tasks++;
    auto in_kernel = kernel_tasks.find(task);
    auto in_cused = cused_tasks.find(task);
    if (!compare_task(task, in_kernel == kernel_tasks.end() ? none : in_kernel->second,
                      in_cused == cused_tasks.end() ? none : in_cused->second, v))
      return v;
  }
  return v;
}

}  // namespace cused::diff
