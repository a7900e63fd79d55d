// SPDX-License-Identifier: GPL-2.0-only
#include "core/alloc/allocator.h"

#include <algorithm>
#include <cerrno>
#include <limits>

namespace cused::core::alloc {

namespace {

constexpr std::size_t kAlign = sizeof(std::uint64_t);  // binder_size_t: protocol 8 (S1.13)

bool align_up(std::size_t value, std::size_t& out) {
  if (value > std::numeric_limits<std::size_t>::max() - (kAlign - 1)) return false;
  out = (value + kAlign - 1) & ~(kAlign - 1);
  return true;
}

}  // namespace

std::size_t sanitized_size(std::size_t data_size, std::size_t offsets_size,
                           std::size_t extra_buffers_size) {
  std::size_t data, offsets, extra;
  if (!align_up(data_size, data) || !align_up(offsets_size, offsets) ||
      !align_up(extra_buffers_size, extra))
    return 0;
  std::size_t total;
  if (__builtin_add_overflow(data, offsets, &total) || __builtin_add_overflow(total, extra, &total))
    return 0;
  return std::max(total, kAlign);  // empty transactions still get a unique address
}

}  // namespace cused::core::alloc
