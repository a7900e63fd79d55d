#include "tests/diff/compare.h"

#include <span>

#include "tests/diff/deviations.h"

namespace cused::diff {

Verdict compare(const Trace& kernel, const Trace& cused, const std::string& path) {
  Verdict v;
  std::size_t k = 0, c = 0;
  while (k < kernel.size() || c < cused.size()) {
    if (k < kernel.size() && c < cused.size() && kernel[k] == cused[c]) {
      k++, c++, v.compared++;
      continue;
    }
    auto known = known_deviation(path, kernel, k, cused, c);
    std::string kernel_line = k < kernel.size() ? kernel[k] : "(end of trace)";
    std::string cused_line = c < cused.size() ? cused[c] : "(end of trace)";
    if (!known) {
      v.kind = Verdict::kDiverged;
      v.line = k + 1, v.cused_line = c + 1;
      v.kernel = kernel_line, v.cused = cused_line;
      return v;
    }
    v.kind = Verdict::kDocumented;
    v.documented.push_back({std::string(known->deviation.name), k + 1, kernel_line, cused_line});
    if (!known->rest_comparable) {
      v.compared++;
      v.not_compared = kernel.size() > k + 1 ? kernel.size() - k - 1 : 0;
      return v;
    }
    v.compared += known->kernel_lines;
    k += known->kernel_lines;
    c += known->cused_lines;
  }
  return v;
}

}  // namespace cused::diff
