// SPDX-License-Identifier: GPL-2.0-only
// The futex word of the barging policies (Drepper, "Futexes Are Tricky", mutex 3): 0 free,
// 1 locked, 2 locked and maybe waited for. Unlock releases the word and wakes one sleeper; until
// that sleeper runs, anyone may take the lock ("barging"), which keeps the lock busy while the
// woken thread is still being scheduled.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/sync/futex.h"

namespace cused::sync::detail {

class BargingWord {
 public:
  bool try_acquire() {
    std::uint32_t expected = kFree;
    return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  // Before each sleep, spins up to `spin_rounds` reads of the word hoping it turns free.
  void acquire(unsigned spin_rounds) {
    if (!try_acquire()) acquire_contended(spin_rounds);
  }
  void release() {
    if (state_.exchange(kFree, std::memory_order_release) == kContended) futex_wake(state_, 1);
  }

 private:
  static constexpr std::uint32_t kFree = 0;
  static constexpr std::uint32_t kLocked = 1;
  static constexpr std::uint32_t kContended = 2;

  void acquire_contended(unsigned spin_rounds);
  bool spin_for(std::uint32_t taken_as, unsigned spin_rounds);

  std::atomic<std::uint32_t> state_{kFree};
};

}  // namespace cused::sync::detail
