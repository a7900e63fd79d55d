// SPDX-License-Identifier: GPL-2.0-only
// Makes the fetched kernel trees' designs (kernel:6.1, kernel:6.12, kernel:7.2: meson passes
// those present in CUSED_TEST_KERNEL_DESIGNS) rows of the registry before gtest instantiates the
// suites, so that every suite that runs each registered design runs them too. A tree that is
// present but does not build or load fails the binary: that is a finding, not a skip.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/alloc/designs/registry.h"
#include "core/alloc/variant.h"
#include "cused/host/kernel_design_loader.h"

namespace {

const bool registered = [] {
  cused::host::enable_kernel_designs();
  const char* list = std::getenv("CUSED_TEST_KERNEL_DESIGNS");
  if (!list || !*list) {
    std::fprintf(stderr, "no kernel trees fetched: the suites run cused's own designs only\n");
    return false;
  }
  std::istringstream names(list);
  for (std::string name; names >> name;) {
    if (!cused::core::alloc::parse_lock_variant(name)) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(),
                   cused::core::alloc::last_resolve_error().c_str());
      std::abort();
    }
  }
  return true;
}();

}  // namespace
