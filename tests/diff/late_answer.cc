// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/late_answer.h"

#include <algorithm>

#include "tests/diff/trace_line.h"

namespace cused::diff {

namespace {

// "12 s1.t0: parked" -> " s1.t0: parked": a line but for its step.
std::string_view unstepped(std::string_view line) {
  auto space = line.find(' ');
  return space == std::string_view::npos ? line : line.substr(space);
}

// Whether `line`, but for its step, is one of `trace`'s lines from index `from` on.
bool later_in(const Trace& trace, std::size_t from, const std::string& line) {
  return from <= trace.size() &&
         std::any_of(trace.begin() + static_cast<long>(from), trace.end(),
                     [&](const std::string& l) { return unstepped(l) == unstepped(line); });
}

}  // namespace

bool late_answer(const Trace& kernel, const Trace& cused, const Verdict& v) {
  TraceLine k = parse_trace_line(v.kernel), c = parse_trace_line(v.cused);
  auto parked = [](const TraceLine& l) { return l.kind == TraceLine::Kind::kParked; };
  if (k.step == c.step && k.thread == c.thread && !k.thread.empty() && parked(k) != parked(c))
    return true;
  return (v.line <= kernel.size() && later_in(cused, v.cused_line, v.kernel)) ||
         (v.cused_line <= cused.size() && later_in(kernel, v.line, v.cused));
}

}  // namespace cused::diff
