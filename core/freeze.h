// One BINDER_FREEZE ioctl in progress (S2.10). The kernel freezes the procs of a pid one after
// the other and may sleep up to timeout_ms on each for its transactions to drain; here the call
// is parked on the proc it waits for and resumed, on the timer thread (timer.h), by whichever
// comes first: the drain, the deadline or an interrupt. `wait_id` says which wait is current;
// the side that swaps it to 0 owns the call (its completion included) until it parks it again or
// answers it, so a late deadline or a second drain is a no-op.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
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

}  // namespace cused::core
