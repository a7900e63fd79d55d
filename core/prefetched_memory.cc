// SPDX-License-Identifier: GPL-2.0-only
#include "core/prefetched_memory.h"

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstring>

namespace cused::core {

namespace {

bool contains(std::uint64_t start, std::size_t size, std::uint64_t addr, std::size_t len) {
  return addr >= start && len <= size && addr - start <= size - len;
}

bool overlaps(std::uint64_t a, std::size_t a_len, std::uint64_t b, std::size_t b_len) {
  return a < b + b_len && b < a + a_len;
}

}  // namespace

const PrefetchedMemory::Held* PrefetchedMemory::holding(std::uint64_t addr, std::size_t len) const {
  for (const Held& held : held_)
    if (contains(held.addr, held.len, addr, len)) return &held;
  return nullptr;
}

void PrefetchedMemory::hold(std::uint64_t addr, const void* copy, std::size_t len) {
  if (len == 0 || held_.size() == held_.capacity()) return;
  held_.push_back({addr, static_cast<const std::byte*>(copy), len});
}

void PrefetchedMemory::forget_overlapping(std::uint64_t addr, std::size_t len) {
  auto stale = std::remove_if(held_.begin(), held_.end(), [&](const Held& held) {
    return overlaps(held.addr, held.len, addr, len);
  });
  held_.erase(stale, held_.end());
}

void PrefetchedMemory::prefetch(std::span<const UserRange> ranges) {
  std::size_t whole = read_ranges(ranges);
  for (std::size_t i = 0; i < whole; ++i) hold(ranges[i].addr, ranges[i].dst, ranges[i].len);
}

void PrefetchedMemory::copy_out(const Held& held, const UserRange& range) {
  const std::byte* from = held.copy + (range.addr - held.addr);
  if (from != range.dst) std::memmove(range.dst, from, range.len);
}

int PrefetchedMemory::read(std::uint64_t addr, void* dst, std::size_t len) {
  if (len == 0) return 0;
  if (const Held* held = holding(addr, len)) {
    copy_out(*held, {addr, dst, len});
    return 0;
  }
  return underneath_.read(addr, dst, len);
}

// The engine never writes a sender's memory while it reads the sender's payload, but if anything
// does, a held copy of those bytes is stale from then on.
int PrefetchedMemory::write(std::uint64_t addr, const void* src, std::size_t len) {
  forget_overlapping(addr, len);
  return underneath_.write(addr, src, len);
}

// Held ranges are copied here; the others go underneath in one gathered read, in order, so that
// the count of whole ranges means what it means for every UserMemory.
std::size_t PrefetchedMemory::read_ranges(std::span<const UserRange> ranges) {
  boost::container::small_vector<UserRange, 4> missing;
  boost::container::small_vector<std::size_t, 4> missing_index;
  std::size_t held_prefix = ranges.size();
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].len == 0 || holding(ranges[i].addr, ranges[i].len)) continue;
    missing.push_back(ranges[i]);
    missing_index.push_back(i);
  }
  if (!missing.empty()) {
    std::size_t got = underneath_.read_ranges({missing.data(), missing.size()});
    if (got < missing.size()) held_prefix = missing_index[got];
  }
  for (std::size_t i = 0; i < held_prefix; ++i)
    if (const Held* held = holding(ranges[i].addr, ranges[i].len)) copy_out(*held, ranges[i]);
  return held_prefix;
}

}  // namespace cused::core
