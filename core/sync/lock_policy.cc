// SPDX-License-Identifier: GPL-2.0-only
#include "core/sync/lock_policy.h"

namespace cused::sync {

std::string_view to_string(LockPolicy policy) {
  switch (policy) {
    case LockPolicy::kBarging:
      return "barging";
    case LockPolicy::kSpinThenPark:
      return "spin-then-park";
    case LockPolicy::kHandoff:
      return "handoff";
    case LockPolicy::kSteal:
      return "steal";
    case LockPolicy::kStealWindow:
      return "steal-window";
  }
  return "unknown";
}

std::optional<LockPolicy> parse_lock_policy(std::string_view name) {
  for (LockPolicy policy : kLockPolicies)
    if (to_string(policy) == name) return policy;
  return std::nullopt;
}

std::string lock_policy_names() {
  std::string names;
  for (LockPolicy policy : kLockPolicies) {
    if (!names.empty()) names += '|';
    names += to_string(policy);
  }
  return names;
}

}  // namespace cused::sync
