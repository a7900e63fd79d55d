// SPDX-License-Identifier: GPL-2.0-only
// What binder-throughput's workers offer and binder-background calls, as binderThroughputTest
// names it: services binderWorker0..N-1 that answer one transaction code.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace cused::tools {

inline constexpr std::uint32_t kWorkerNopCode = 1;  // IBinder::FIRST_CALL_TRANSACTION
inline constexpr std::string_view kWorkerPrefix = "binderWorker";

inline std::string worker_name(std::string_view prefix, int num) {
  return fmt::format("{}{}", prefix, num);
}

}  // namespace cused::tools
