#include "core/sync/mutex.h"

#include "core/sync/futex.h"

namespace cused::sync {

void Mutex::lock_slow() {
  // Announce a waiter (state 2) before sleeping, so that unlock knows to wake someone.
  while (state_.exchange(2, std::memory_order_acquire) != 0) futex_wait(state_, 2);
}

void Mutex::wake_one() { futex_wake(state_, 1); }

}  // namespace cused::sync
