// SPDX-License-Identifier: GPL-2.0-only
// How a sleeping lock of the daemon behaves under contention: the lock_policy= setting of a
// device's variant, which picks the policy of the proc and node locks (and of the allocator's
// lock where that is a mutex) for procs opened afterwards. docs/locking.md has the exact rules.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace cused::sync {

enum class LockPolicy {
  kBarging,       // "barging": sync::Mutex, unlock releases, anyone may take it, no spinning
  kSpinThenPark,  // "spin-then-park": sync::SpinThenParkMutex, barging plus a bounded spin
  kHandoff,       // "handoff": sync::HandoffMutex, FIFO, ownership passed to the first waiter
  kSteal,         // "steal": sync::StealMutex, released to be stolen until the woken waiter runs
  kStealWindow,   // "steal-window": sync::StealMutex, stolen only briefly, then kept for the waiter
};

inline constexpr std::array kLockPolicies = {LockPolicy::kBarging, LockPolicy::kSpinThenPark,
                                             LockPolicy::kHandoff, LockPolicy::kSteal,
                                             LockPolicy::kStealWindow};

// The name used in lock_policy= and in every stats line.
std::string_view to_string(LockPolicy policy);
// The policy a lock_policy= value names, exactly as to_string spells it; nullopt otherwise.
std::optional<LockPolicy> parse_lock_policy(std::string_view name);
// "barging|spin-then-park|handoff|steal|steal-window", for usage and error messages.
std::string lock_policy_names();

}  // namespace cused::sync
