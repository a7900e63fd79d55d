// Thin wrappers over the futex system call (private futexes: all users live in the daemon).
#pragma once

#include <atomic>
#include <cstdint>

namespace cused::sync {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected);
void futex_wake(std::atomic<std::uint32_t>& word, int count);

}  // namespace cused::sync
