// Sequential reads of a caller's write buffer (the BC_ command stream), in as few
// process_vm_readv calls as possible: it reads ahead a window of the buffer and serves commands
// from it, and only when a window cannot be read does it fall back to reading each field alone,
// so that an unreadable command still fails exactly where the kernel's get_user would (S3.1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/user_memory.h"

namespace cused::core {

class UserReader {
 public:
  UserReader(UserMemory& memory, std::uint64_t position, std::uint64_t end)
      : memory_(memory), position_(position), end_(end) {}

  UserMemory& memory() { return memory_; }
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
  static constexpr std::size_t kWindow = 512;
  bool in_window(std::size_t len) const;

  UserMemory& memory_;
  std::uint64_t position_;
  const std::uint64_t end_;
  std::array<std::byte, kWindow> window_;
  std::uint64_t window_start_ = 0;
  std::size_t window_len_ = 0;
};

}  // namespace cused::core
