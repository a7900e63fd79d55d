// SPDX-License-Identifier: GPL-2.0-only
// The registry of allocator designs (alloc_lock=): one row per design, the only list of them.
// The parser and printer of alloc_lock= (variant.h), device_variant's error text, the design ids
// of the cused_lock_* events (lock_trace.h), every test's and bench's list of designs and
// docs/variants.md's table (checked by tests/unit/alloc/registry_test.cc) all come from here.
// Adding a design is one file pair in this directory and one row in registry.cc (docs/variants.md,
// "Adding a design").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "core/alloc/allocator.h"
#include "core/alloc/page_lru.h"
#include "core/alloc/variant.h"
#include "core/buffer_file.h"

namespace cused::core::alloc {

struct Design {
  using Factory = std::unique_ptr<Allocator> (*)(BufferFile& file, Variant variant, PageLru& lru,
                                                 AllocatorOptions options, std::uint8_t trace_id);

  std::string_view name;         // alloc_lock=<name>
  std::string_view description;  // one line, for docs/variants.md and --help texts
  // The design field of its cused_lock_* events (variant= in the text form, lock_trace.h);
  // never reused, so that recorded traces keep their meaning.
  std::uint8_t trace_id;
  // Loses data under reclaim by design (a published bug kept to be reproduced): the suites that
  // assert no loss expect the loss instead, and stress runs it only on request.
  bool racy_on_purpose;
  std::string_view doc;  // where the design is described, relative to the source tree
  Factory make;

  // This design as the LockVariant a Variant holds.
  LockVariant variant() const;
};

// Every registered design, in the registry's order (the first is the default, mutex).
std::span<const Design> designs();
// The design named `name`, or nullptr.
const Design* find_design(std::string_view name);
// The design whose trace id is `trace_id`, or nullptr (a trace recorded by another build).
const Design* find_design_by_trace_id(std::uint64_t trace_id);
const Design& design_of(LockVariant lock);

// The allocator `variant` names.
std::unique_ptr<Allocator> make_allocator(BufferFile& file, Variant variant, PageLru& lru,
                                          AllocatorOptions options = {});

}  // namespace cused::core::alloc
