// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/compare.h"

#include <algorithm>
#include <span>

#include "tests/diff/deviations.h"

namespace cused::diff {

namespace {

// A line of a slot a deviation's effect goes on in: its answers and its state, and another
// proc's state line that names it (a transaction from or to one of its threads); not the
// coordinator's own actions on it (open, munmap, kill), which both traces show alike.
bool set_aside(const TraceLine& line, const std::vector<std::string>& affected) {
  if (line.kind == TraceLine::Kind::kSlot || line.slot.empty()) return false;
  return std::any_of(affected.begin(), affected.end(), [&](const std::string& slot) {
    return line.slot == slot || (line.kind == TraceLine::Kind::kState &&
                                 line.rest.find(" " + slot + ":") != std::string::npos);
  });
}

}  // namespace

ParsedTrace::ParsedTrace(const Trace& trace) {
  lines.reserve(trace.size());
  for (const auto& text : trace) lines.push_back(parse_trace_line(text));
  for (const auto& line : lines) pointers.push_back(&line);
}

Verdict compare(const Trace& kernel, const Trace& cused, const std::string& path) {
  ParsedTrace k(kernel), c(cused);
  return compare_lines(k.pointers, c.pointers, path);
}

Verdict compare_lines(std::span<const TraceLine* const> kernel,
                      std::span<const TraceLine* const> cused, const std::string& path) {
  Verdict v;
  std::vector<std::string> affected;  // slots a documented deviation's effect goes on in
  std::size_t k = 0, c = 0;
  while (k < kernel.size() || c < cused.size()) {
    if (k < kernel.size() && set_aside(*kernel[k], affected)) {
      k++, v.not_compared++;
      continue;
    }
    if (c < cused.size() && set_aside(*cused[c], affected)) {
      c++, v.cused_not_compared++;
      continue;
    }
    if (k < kernel.size() && c < cused.size() &&
        (kernel[k] == cused[c] || kernel[k]->text == cused[c]->text)) {
      // A slot opened again is a new proc: what the deviation did to the old one is gone.
      if (kernel[k]->kind == TraceLine::Kind::kSlot && kernel[k]->op == "open space")
        std::erase(affected, kernel[k]->slot);
      k++, c++, v.compared++;
      continue;
    }
    auto known = known_deviation(path, kernel, k, cused, c);
    std::string kernel_line = k < kernel.size() ? kernel[k]->text : "(end of trace)";
    std::string cused_line = c < cused.size() ? cused[c]->text : "(end of trace)";
    if (!known) {
      v.kind = Verdict::kDiverged;
      v.line = k + 1, v.cused_line = c + 1;
      v.kernel = kernel_line, v.cused = cused_line;
      return v;
    }
    v.kind = Verdict::kDocumented;
    v.documented.push_back({std::string(known->deviation.name), std::string(known->rule), k + 1,
                            kernel_line, cused_line});
    for (const auto& slot : known->affected_slots)
      if (std::find(affected.begin(), affected.end(), slot) == affected.end())
        affected.push_back(slot);
    v.compared += known->kernel_lines;
    k += known->kernel_lines;
    c += known->cused_lines;
  }
  return v;
}

}  // namespace cused::diff
