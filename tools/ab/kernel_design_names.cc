// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/kernel_design_names.h"

#include <stdexcept>
#include <string>
#include <string_view>

#include "core/alloc/designs/registry.h"

namespace cused::tools::ab {

namespace {

std::unique_ptr<core::alloc::Allocator> not_in_binder_ab(core::BufferFile&, core::alloc::Variant,
                                                         core::alloc::PageLru&,
                                                         core::alloc::AllocatorOptions,
                                                         std::uint8_t) {
  throw std::logic_error("binder-ab names kernel designs; only cused builds and runs them");
}

const core::alloc::Design* name_only(std::string_view name, std::string& error) {
  constexpr std::string_view kPrefix = "kernel:";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size() || name.ends_with("+")) {
    error = "kernel:TREE or kernel:TREE+PATCH... is needed";
    return nullptr;
  }
  const core::alloc::Design* design =
      core::alloc::add_design(name, "a kernel design, built by the daemon that serves it",
                              "docs/kernel-designs.md", &not_in_binder_ab);
  if (!design) error = "too many allocator designs named";
  return design;
}

}  // namespace

void accept_kernel_design_names() { core::alloc::set_design_resolver(&name_only); }

}  // namespace cused::tools::ab
