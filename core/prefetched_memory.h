// SPDX-License-Identifier: GPL-2.0-only
// A caller's memory with some ranges already copied into the daemon: reads that fall inside one
// of them are served from the copy, everything else goes to the memory underneath. Reaching
// another process's memory costs a system call per access on this side of the kernel, so the
// engine reads what it will certainly need (a transaction's payload and offsets) or will very
// likely need (the payload a thread sent last time, read along with its next commands) in one
// gathered read, and then consumes it piece by piece as the kernel's binder_transaction does
// with copy_from_user.
#pragma once

#include <boost/container/static_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/user_memory.h"

namespace cused::core {

class PrefetchedMemory final : public UserMemory {
 public:
  explicit PrefetchedMemory(UserMemory& underneath) : underneath_(underneath) {}

  // Reads `ranges` with one read_ranges() on the memory underneath (or from ranges already held)
  // and keeps those that arrived whole. A range that did not is simply not held: its reads go to
  // the memory underneath later and fail there, at the same step as without prefetching.
  void prefetch(std::span<const UserRange> ranges);
  // Keeps a copy made elsewhere: `len` bytes of the caller's memory at `addr` are at `copy`.
  void hold(std::uint64_t addr, const void* copy, std::size_t len);

  int read(std::uint64_t addr, void* dst, std::size_t len) override;
  int write(std::uint64_t addr, const void* src, std::size_t len) override;
  std::size_t read_ranges(std::span<const UserRange> ranges) override;

 private:
  struct Held {
    std::uint64_t addr;
    const std::byte* copy;
    std::size_t len;
  };
  static constexpr std::size_t kMaxHeld = 4;
  const Held* holding(std::uint64_t addr, std::size_t len) const;
  // Copies `range` (inside `held`) out of the held copy.
  static void copy_out(const Held& held, const UserRange& range);
  void forget_overlapping(std::uint64_t addr, std::size_t len);

  UserMemory& underneath_;
  boost::container::static_vector<Held, kMaxHeld> held_;
};

}  // namespace cused::core
