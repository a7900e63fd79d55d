// SPDX-License-Identifier: GPL-2.0-only
#include "core/sync/barging_word.h"

#include "core/sync/cpu_relax.h"

namespace cused::sync::detail {

void BargingWord::acquire_contended(unsigned spin_rounds) {
  // A thread that has never slept may take a free word as plain "locked": any sleeper was woken by
  // the unlock that freed it and marks the word contended again when it retries. Once we have
  // slept we are such a sleeper, and must take the word as "contended" so that our own unlock
  // wakes whoever still sleeps (taking it as "locked" there would lose their wake-up).
  std::uint32_t taken_as = kLocked;
  for (;;) {
    if (spin_for(taken_as, spin_rounds)) return;
    if (state_.exchange(kContended, std::memory_order_acquire) == kFree) return;
    futex_wait(state_, kContended);
    taken_as = kContended;
  }
}

bool BargingWord::spin_for(std::uint32_t taken_as, unsigned spin_rounds) {
  for (unsigned round = 0; round < spin_rounds; ++round) {
    std::uint32_t seen = state_.load(std::memory_order_relaxed);
    if (seen == kFree && state_.compare_exchange_weak(seen, taken_as, std::memory_order_acquire,
                                                      std::memory_order_relaxed))
      return true;
    cpu_relax();
  }
  return false;
}

}  // namespace cused::sync::detail
