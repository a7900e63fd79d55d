#include "core/alloc/designs/registry.h"

#include "core/alloc/designs/mutex.h"
#include "core/alloc/designs/spin.h"
#include "core/alloc/designs/spin_install.h"

namespace cused::core::alloc {

std::unique_ptr<Allocator> make_allocator(BufferFile& file, Variant variant, PageLru& lru,
                                          AllocatorOptions options) {
  const auto trace_id = static_cast<std::uint8_t>(variant.lock);
  switch (variant.lock) {
    case LockVariant::mutex:
      return std::make_unique<designs::MutexAllocator>(file, variant, lru, std::move(options),
                                                       trace_id);
    case LockVariant::spin:
      return std::make_unique<designs::SpinAllocator>(file, variant, lru, std::move(options),
                                                      trace_id);
    case LockVariant::spin_install:
      return std::make_unique<designs::SpinInstallAllocator>(file, variant, lru, std::move(options),
                                                             trace_id);
  }
  return nullptr;
}

}  // namespace cused::core::alloc
