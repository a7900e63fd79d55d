#include "core/sync/spinlock.h"

#include <sched.h>

namespace cused::sync {

void SpinLock::relax(unsigned round) {
  // 2 cores, preemptible holders: after ~a microsecond of pausing, give the CPU away.
  constexpr unsigned kPauseRounds = 64;
  if (round < kPauseRounds) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();
  }
}

}  // namespace cused::sync
