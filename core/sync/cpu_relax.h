// SPDX-License-Identifier: GPL-2.0-only
// Waiting politely on a busy cache line: the CPU's spin-wait hint, and the exponential backoff
// that sync::SpinLock uses between reads of its lock word.
#pragma once

#include <thread>

namespace cused::sync {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Exponential backoff with a yield at the end. Doubling the pause after every busy read spreads
// out the spinners that all see the lock word turn free at once (each would otherwise take the
// line exclusive with its exchange and delay the winner). Once the pause reaches its cap, after
// 1 + 2 + ... + 64 = 127 pauses (about 6 µs: a pause takes about 50 ns on the 2-vCPU test
// machine), the holder has most likely been preempted, which a kernel spinlock never has to
// consider but a userspace one must: from then on every busy read gives the CPU away.
class Backoff {
 public:
  void pause() {
    if (pauses_ > kMaxPauses) {
      // The standard library's spelling of sched_yield (libstdc++ inlines it to that very call),
      // so core names no OS call and the lock's behaviour is the same; unlike the futex calls it
      // needs no host seam.
      std::this_thread::yield();
      return;
    }
    for (unsigned i = 0; i < pauses_; ++i) cpu_relax();
    pauses_ *= 2;
  }

 private:
  static constexpr unsigned kMaxPauses = 64;
  unsigned pauses_ = 1;
};

}  // namespace cused::sync
