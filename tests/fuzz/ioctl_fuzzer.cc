// SPDX-License-Identifier: GPL-2.0-only
// libFuzzer target (issue 8): one input is a script over several procs and threads
// (tests/fuzz/script.h). Any crash, sanitizer report, leak or broken core invariant fails.
#include <cstdio>
#include <cstdlib>

#include "core/alloc/designs/registry.h"
#include "core/alloc/variant.h"
#include "cused/host/kernel_design_loader.h"
#include "tests/fuzz/script.h"

// CUSED_FUZZ_DESIGN=kernel:7.2 (any alloc_lock= design): every proc uses that allocator, so that
// the fuzzer drives a kernel tree's binder_alloc.c (docs/kernel-designs.md). The object is built
// with the fuzzer's sanitizers and, for coverage of the kernel's file, with libFuzzer's counters.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* design = std::getenv("CUSED_FUZZ_DESIGN");
  if (!design || !*design) return 0;
  setenv("CUSED_KERNEL_CFLAGS", "-fsanitize=fuzzer-no-link", 0);
  cused::host::enable_kernel_designs();
  auto lock = cused::core::alloc::parse_lock_variant(design);
  if (!lock) {
    std::fprintf(stderr, "CUSED_FUZZ_DESIGN=%s: %s\n", design,
                 cused::core::alloc::last_resolve_error().c_str());
    std::exit(2);
  }
  cused::fuzz::pin_design(*lock);
  std::fprintf(stderr, "fuzzing with alloc_lock=%s\n", design);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cused::fuzz::Outcome outcome = cused::fuzz::run_script({data, size});
  if (outcome.violations.empty()) return 0;
  std::fprintf(stderr, "core invariants broken after %zu steps:\n", outcome.steps);
  for (const auto& line : outcome.violations) std::fprintf(stderr, "  %s\n", line.c_str());
  std::abort();
}
