// SPDX-License-Identifier: GPL-2.0-only
// One BINDER_FREEZE ioctl in progress (S2.10). The kernel freezes the procs of a pid one after
// the other and may sleep up to timeout_ms on each for its transactions to drain; here the call
// is parked on the proc it waits for and resumed, on the timer's thread (core/timer.h), by
// whichever comes first: the drain, the deadline or an interrupt. `wait_id` says which wait is
// current; the side that swaps it to 0 owns the call (its completion included) until it parks it
// again or answers it, so a late deadline or a second drain is a no-op.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/completion.h"
#include "uapi/binder.h"

namespace cused::core {

class Proc;

struct FreezeCall {
  binder_freeze_info info{};
  pid_t tid = 0;               // the caller's thread: interrupts name it
  std::weak_ptr<Proc> caller;  // the proc the ioctl was issued on
  std::vector<std::shared_ptr<Proc>> targets;
  std::size_t next = 0;  // the target being frozen
  // Touched only by the side that runs the call (the ioctl, or whoever won wait_id).
  std::unique_ptr<Completion> completion;
  std::atomic<std::uint64_t> wait_id{0};  // nonzero while parked
  // An interrupt arrived; set before it tries to claim the wait, so that a wait registered just
  // after sees it.
  std::atomic<bool> interrupt_pending{false};

  bool claim(std::uint64_t id) { return id && wait_id.compare_exchange_strong(id, 0); }
};

// A BINDER_FREEZE call parked on a proc until it drains, and the wait it is parked in.
struct FreezeWaiter {
  std::shared_ptr<FreezeCall> call;
  std::uint64_t wait_id;
};

// A proc's side of freezing (S2.10, S2.11, S4.13); the proc's inner lock guards all of it.
struct FreezeState {
  bool frozen = false;
  bool sync_recv = false;   // a sync call was refused while frozen (S2.11 sync_recv bit 0)
  bool async_recv = false;  // a oneway arrived while frozen
  // BINDER_FREEZE calls waiting for this proc to drain, and this proc's own calls by tid (for
  // interrupts).
  std::vector<FreezeWaiter> waiters;
  std::map<pid_t, std::weak_ptr<FreezeCall>> calls;

  // Frozen or thawed; either way what arrived while frozen is forgotten (S2.10).
  void set(bool frozen_now) {
    frozen = frozen_now;
    sync_recv = async_recv = false;
  }
};

}  // namespace cused::core
