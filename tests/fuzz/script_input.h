// SPDX-License-Identifier: GPL-2.0-only
// Reading a script's bytes (tests/fuzz/script.h): past the end every read is zero, so any byte
// string is a complete script. Shared by the in-process runner and tests/diff's device runner,
// which must consume the same bytes for the same step.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "uapi/binder.h"

namespace cused::fuzz {

// Buffer space sizes a script can open with; 0: the client never maps (S1.7).
inline constexpr std::array<std::size_t, 6> kSpaces = {0,        4096,      2 * 4096,
                                                       4 * 4096, 16 * 4096, (1u << 20) - 2 * 4096};
// The ioctls Op::kIoctl picks from (S0.1), with arbitrary argument bytes.
inline constexpr std::array<unsigned, 11> kIoctls = {BINDER_VERSION,
                                                     BINDER_SET_MAX_THREADS,
                                                     BINDER_GET_NODE_DEBUG_INFO,
                                                     BINDER_GET_NODE_INFO_FOR_REF,
                                                     BINDER_ENABLE_ONEWAY_SPAM_DETECTION,
                                                     BINDER_GET_EXTENDED_ERROR,
                                                     BINDER_SET_IDLE_TIMEOUT,
                                                     BINDER_SET_IDLE_PRIORITY,
                                                     BINDER_FREEZE,
                                                     BINDER_GET_FROZEN_INFO,
                                                     BINDER_SET_CONTEXT_MGR_EXT};
// An address no client maps: PTR objects and damaged parcels point here (EFAULT).
inline constexpr std::uint64_t kBogusAddress = 0xdead0000;

// Op::kIoctl's command and argument bytes (exactly the command's _IOC_SIZE, up to 256).
struct ScriptIoctl {
  unsigned cmd = 0;
  std::array<std::byte, 256> arg{};
  std::size_t size = 0;
  std::size_t at = 0;  // where the argument bytes start in the script
  std::span<std::byte> argument() { return std::span(arg.data(), size); }
};

// A BINDER_WRITE_READ's read buffer for a script's read mode: bit 2 no read, bit 1 a small
// buffer (8 bytes and up), else 512 bytes. Bit 0 (nonblocking) is the runner's.
inline std::size_t read_size(std::uint8_t read_mode) {
  return (read_mode & 4) ? 0 : (read_mode & 2) ? 8 + (read_mode >> 3) : 512;
}

class ScriptInput {
 public:
  explicit ScriptInput(std::span<const std::uint8_t> data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  std::size_t position() const { return pos_; }
  std::uint8_t u8() { return pos_ < data_.size() ? data_[pos_++] : 0; }
  template <typename T>
  T value() {
    T out{};
    bytes(&out, sizeof out);
    return out;
  }
  void bytes(void* dst, std::size_t len) {
    std::size_t n = std::min(len, data_.size() - std::min(pos_, data_.size()));
    if (len) std::memset(dst, 0, len);
    if (n) std::memcpy(dst, data_.data() + pos_, n);
    pos_ += n;
  }
  // The command (an index into kIoctls, or at 0xf0 and above a raw u32 that follows) and its
  // argument bytes.
  ScriptIoctl ioctl() {
    ScriptIoctl out;
    std::uint8_t which = u8();
    out.cmd = which < 0xf0 ? kIoctls[which % kIoctls.size()] : value<std::uint32_t>();
    out.size = std::min<std::size_t>(_IOC_SIZE(out.cmd), out.arg.size());
    out.at = pos_;
    bytes(out.arg.data(), out.size);
    return out;
  }
  // A handle: 0..5, or (0xf0 and above) a raw u32 that follows.
  std::uint32_t handle() {
    std::uint8_t h = u8();
    return h < 0xf0 ? h % 6 : value<std::uint32_t>();
  }

 private:
  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
};

}  // namespace cused::fuzz
