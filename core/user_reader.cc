// SPDX-License-Identifier: GPL-2.0-only
#include "core/user_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cused::core {

bool UserReader::in_window(std::size_t len) const {
  return position_ >= window_start_ && position_ - window_start_ + len <= window_len_;
}

bool UserReader::fill_window(std::size_t want) {
  if (hint_.empty() || hint_.data_size + hint_.offsets_size > payload_.size())
    return underneath_.read(position_, window_.data(), want) == 0;
  const UserRange ranges[] = {
      {position_, window_.data(), want},
      {hint_.data, payload_.data(), hint_.data_size},
      {hint_.offsets, payload_.data() + hint_.data_size, hint_.offsets_size},
  };
  hint_ = {};  // guessed once per ioctl
  std::size_t whole = underneath_.read_ranges(ranges);
  for (std::size_t i = 1; i < whole; ++i)
    prefetched_.hold(ranges[i].addr, ranges[i].dst, ranges[i].len);
  return whole > 0;
}

int UserReader::read(void* dst, std::size_t len) {
  if (len > kWindow) return underneath_.read(position_, dst, len) ? -EFAULT : 0;
  if (!in_window(len)) {
    std::size_t ahead = end_ > position_ ? std::min<std::uint64_t>(kWindow, end_ - position_) : 0;
    std::size_t want = std::max(len, ahead);
    window_start_ = position_;
    window_len_ = 0;
    if (fill_window(want)) {
      window_len_ = want;
    } else if (want > len && underneath_.read(position_, window_.data(), len) == 0) {
      window_len_ = len;
    } else {
      return -EFAULT;
    }
  }
  std::memcpy(dst, window_.data() + (position_ - window_start_), len);
  position_ += len;
  return 0;
}

}  // namespace cused::core
