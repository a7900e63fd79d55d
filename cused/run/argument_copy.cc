// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/argument_copy.h"

#include <algorithm>

namespace cused::run {

ArgumentCopy::ArgumentCopy(core::UserMemory& caller, std::uint64_t arg, std::size_t size,
                           const core::ReadAheadHint& hint) {
  size = std::min(size, argument_.size());
  if (size == 0) return;
  const core::PayloadHint& payload = hint.payload;
  const core::UserRange ranges[] = {
      {arg, argument_.data(), size},
      {hint.write_buffer, commands_.data(), std::min(hint.write_len, commands_.size())},
      // Proc::payload_hint_for gives no hint for a payload beyond PayloadHint::kMaxBytes.
      {payload.data, payload_.data(), payload.data_size},
      {payload.offsets, payload_.data() + payload.data_size, payload.offsets_size},
  };
  // The argument goes first: a guessed range that faults ends the read after it, never before.
  std::size_t whole = caller.read_ranges(ranges);
  if (whole == 0) return;
  argument_size_ = size;
  for (std::size_t i = 1; i < whole; ++i)
    if (ranges[i].len > 0) held_.push_back(ranges[i]);
}

}  // namespace cused::run
