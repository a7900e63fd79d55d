// SPDX-License-Identifier: GPL-2.0-only
// sync::SpinThenParkMutex: the "spin-then-park" lock policy (lock_policy=spin-then-park). The
// barging futex mutex of sync::Mutex, plus a bounded optimistic spin before every sleep: a
// contender (and a woken sleeper) first reads the lock word for a while, hoping the holder is
// running and about to unlock, and only then sleeps on the futex. This is the userspace shape of
// the kernel mutex's optimistic spinning. Userspace cannot ask whether the holder is on a CPU (the
// kernel's spin condition), so the spin is bounded by a count instead, as glibc's adaptive mutex
// does.
#pragma once

#include "core/sync/barging_word.h"
#include "core/sync/lock_api.h"
#include "core/sync/thread_annotations.h"

namespace cused::sync {

class CUSED_CAPABILITY("mutex") SpinThenParkMutex : public LockApi<SpinThenParkMutex> {
 public:
  // glibc's default for adaptive mutexes (the glibc.pthread.mutex_spin_count tunable). A round is
  // one read of the word and one pause; a pause takes about 50 ns on the 2-vCPU test machine (AMD
  // EPYC under KVM), so this is about 5 µs: roughly what a futex wake-up takes to get a sleeper
  // running again, beyond which spinning costs more than sleeping would have.
  static constexpr unsigned kDefaultSpinRounds = 100;

  explicit SpinThenParkMutex(unsigned spin_rounds = kDefaultSpinRounds)
      : spin_rounds_(spin_rounds) {}

 private:
  friend class LockApi<SpinThenParkMutex>;
  void acquire() { word_.acquire(spin_rounds_); }
  bool try_acquire() { return word_.try_acquire(); }
  void release() { word_.release(); }

  detail::BargingWord word_;
  const unsigned spin_rounds_;
};

}  // namespace cused::sync
