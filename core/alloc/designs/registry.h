// Makes the allocator a variant names (alloc_lock=): one design per file in this directory.
#pragma once

#include <memory>

#include "core/alloc/allocator.h"
#include "core/alloc/page_lru.h"
#include "core/buffer_file.h"

namespace cused::core::alloc {

std::unique_ptr<Allocator> make_allocator(BufferFile& file, Variant variant, PageLru& lru,
                                          AllocatorOptions options = {});

}  // namespace cused::core::alloc
