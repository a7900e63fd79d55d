// SPDX-License-Identifier: GPL-2.0-only
// The registry of allocator designs (alloc_lock=): one row per design, the only list of them.
// The parser and printer of alloc_lock= (variant.h), device_variant's error text, the design ids
// of the cused_lock_* events (lock_trace.h), every test's and bench's list of designs and
// docs/variants.md's table (checked by tests/unit/alloc/registry_test.cc) all come from here.
// Adding a design is one file pair in this directory and one row in registry.cc (docs/variants.md,
// "Adding a design").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
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

// Every registered design, in the registry's order (the first is the default, mutex): cused's
// own designs, then the kernel designs loaded so far (alloc_lock=kernel:TREE, core/alloc/kernel/).
std::span<const Design> designs();
// cused's own designs only (docs/variants.md's table).
std::span<const Design> builtin_designs();

// A design added while running: a kernel design (core/alloc/kernel/kernel_design.h). `name` and
// `description` are copied; its trace id is the next free one from kFirstLoadedTraceId. Returns
// the row, or nullptr when the registry is full (kMaxLoadedDesigns). Rows are never removed.
inline constexpr std::uint8_t kFirstLoadedTraceId = 16;
inline constexpr std::size_t kMaxLoadedDesigns = 32;
const Design* add_design(std::string_view name, std::string_view description, std::string_view doc,
                         Design::Factory make);
// Makes the design a name like "kernel:7.2" means when no row has that name yet (installed by
// the host, which builds and loads kernel designs): returns the row it added, or nullptr with
// `error` set. Without a resolver such names are unknown.
using DesignResolver = const Design* (*)(std::string_view name, std::string& error);
void set_design_resolver(DesignResolver resolver);
// The resolver's error for the last name it could not make (for the parser's message).
std::string last_resolve_error();
// The design named `name`, or nullptr.
const Design* find_design(std::string_view name);
// The design whose trace id is `trace_id`, or nullptr (a trace recorded by another build).
const Design* find_design_by_trace_id(std::uint64_t trace_id);
const Design& design_of(LockVariant lock);

// The allocator `variant` names.
std::unique_ptr<Allocator> make_allocator(BufferFile& file, Variant variant, PageLru& lru,
                                          AllocatorOptions options = {});

}  // namespace cused::core::alloc
