// Shared test scaffolding for core/alloc: a memfd-backed proc space, the global LRU, and
// helpers that describe page state the way S9.12 reports it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/alloc/allocator.h"
#include "core/alloc/designs/registry.h"
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
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

inline constexpr Variant kAllVariants[] = {
    {LockVariant::mutex, PageTableVariant::eager},
    {LockVariant::mutex, PageTableVariant::lazy},
    {LockVariant::spin, PageTableVariant::eager},
    {LockVariant::spin, PageTableVariant::lazy},
    {LockVariant::spin_install, PageTableVariant::eager},
    {LockVariant::spin_install, PageTableVariant::lazy},
};

}  // namespace cused::core::alloc::testing
