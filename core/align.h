// SPDX-License-Identifier: GPL-2.0-only
// Buffer layout arithmetic (S4.10: every area of a transaction buffer starts 8-aligned).
#pragma once

#include <cstdint>

namespace cused::core {

constexpr std::uint64_t align8(std::uint64_t value) { return (value + 7) & ~std::uint64_t{7}; }

}  // namespace cused::core
