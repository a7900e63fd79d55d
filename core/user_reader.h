// SPDX-License-Identifier: GPL-2.0-only
// Sequential reads of a caller's write buffer (the BC_ command stream), in as few
// process_vm_readv calls as possible: it reads ahead a window of the buffer and serves commands
// from it, and only when a window cannot be read does it fall back to reading each field alone,
// so that an unreadable command still fails exactly where the kernel's get_user would (S3.1).
//
// With the first window it also reads, in the same gathered read, the payload the thread sent
// with its previous transaction (PayloadHint): binder clients build each call's Parcel in a
// buffer that malloc hands back at the same address call after call, so the payload a
// BC_TRANSACTION or BC_REPLY names is usually already in the daemon when the command is run, and
// the call costs one system call less. memory() serves it from there when the addresses match.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/prefetched_memory.h"
#include "core/user_memory.h"

namespace cused::core {

class UserReader {
 public:
  // The most a window reads ahead of the cursor.
  static constexpr std::size_t kWindow = 512;

  UserReader(UserMemory& memory, std::uint64_t position, std::uint64_t end, PayloadHint hint = {})
      : prefetched_(memory), underneath_(memory), position_(position), end_(end), hint_(hint) {}
  UserReader(const UserReader&) = delete;
  UserReader& operator=(const UserReader&) = delete;

  // The caller's memory, with the read-ahead payload held.
  UserMemory& memory() { return prefetched_; }
  std::uint64_t position() const { return position_; }
  bool at_end() const { return position_ >= end_; }

  // Copies `len` bytes at the cursor and advances. Like get_user, a payload may run past the end
  // of the write buffer. Returns 0 or -EFAULT.
  int read(void* dst, std::size_t len);
  template <typename T>
  int read(T& value) {
    return read(&value, sizeof value);
  }

 private:
  bool in_window(std::size_t len) const;
  // Reads `want` bytes at the cursor into the window, with the hinted payload if one is pending.
  bool fill_window(std::size_t want);

  PrefetchedMemory prefetched_;
  UserMemory& underneath_;
  std::uint64_t position_;
  const std::uint64_t end_;
  PayloadHint hint_;
  std::array<std::byte, kWindow> window_;
  std::uint64_t window_start_ = 0;
  std::size_t window_len_ = 0;
  std::array<std::byte, PayloadHint::kMaxBytes> payload_;
};

}  // namespace cused::core
