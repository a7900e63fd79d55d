// SPDX-License-Identifier: GPL-2.0-only
// Shared test scaffolding for core/alloc: a memfd-backed proc space, the global LRU, and
// helpers that describe page state the way S9.12 reports it.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/alloc/allocator.h"
#include "core/alloc/designs/registry.h"
#include "core/alloc/kernel/kernel_design.h"
#include "core/alloc/page_lru.h"
#include "core/buffer_file.h"
#include "cused/host/memfd_buffer_file.h"

namespace cused::core::alloc::testing {

// One proc: its memfd and its allocator, mapped over `space` bytes.
struct TestProc {
  TestProc(PageLru& lru, Variant variant, std::size_t space = kMaxBufferSpace,
           AllocatorOptions options = {})
      : file(host::MemfdBufferFile::create("cused-alloc-test", space)),
        alloc(make_allocator(*file, variant, lru, std::move(options))) {
    if (alloc->map(space) != 0) throw std::runtime_error("map failed");
  }
  ~TestProc() { alloc.reset(); }  // the allocator goes before its file

  Buffer* sync_buffer(std::size_t size) { return alloc->new_buffer(size, 0, 0, false, 1).buffer; }

  std::unique_ptr<BufferFile> file;
  std::unique_ptr<Allocator> alloc;
};

inline std::string name_of(const Variant& variant) {
  std::string name =
      std::string(to_string(variant.lock)) + "_" + std::string(to_string(variant.pages));
  for (char& c : name)  // gtest's names: "kernel:6.12" is kernel_6_12
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// The kernel version of a kernel design (KERNEL_VERSION(a, b, c)), 0 for cused's own designs.
inline int kernel_version_code(const Variant& variant) {
  const KernelObject* object = kernel_object_of(variant.lock);
  if (object == nullptr) return 0;
  int major = 0, minor = 0, sub = 0;
  std::sscanf(object->abi->kernel_version, "%d.%d.%d", &major, &minor, &sub);
  return (major << 16) + (minor << 8) + std::min(sub, 255);
}
inline bool is_kernel_design(const Variant& variant) { return kernel_version_code(variant) != 0; }
constexpr int kernel_version(int major, int minor) { return (major << 16) + (minor << 8); }

// Every registered design (core/alloc/designs/registry.cc) with each page table: the allocator
// suites' parameters. design_coverage.cc fails a suite that leaves a registered design out. A
// kernel design allocates its page array as its file does (pages= does not apply): once.
inline std::vector<Variant> all_variants() {
  std::vector<Variant> variants;
  for (const Design& design : designs())
    for (PageTableVariant pages : {PageTableVariant::eager, PageTableVariant::lazy}) {
      variants.push_back({design.variant(), pages});
      if (kernel_object_of(design.variant())) break;
    }
  return variants;
}

// Every registered design once, the page tables taken in turn: for the suites too slow to run
// each design with both.
inline std::vector<Variant> each_design() {
  std::vector<Variant> variants;
  for (const Design& design : designs())
    variants.push_back({design.variant(), variants.size() % 2 == 0 ? PageTableVariant::eager
                                                                   : PageTableVariant::lazy});
  return variants;
}

inline bool racy_on_purpose(const Variant& variant) {
  return design_of(variant.lock).racy_on_purpose;
}

}  // namespace cused::core::alloc::testing

namespace cused::core::alloc {

// gtest prints a parameter so: "alloc_lock=spin-install,pages=lazy" (design_coverage.cc reads it).
inline void PrintTo(const Variant& variant, std::ostream* out) { *out << to_string(variant); }

}  // namespace cused::core::alloc
