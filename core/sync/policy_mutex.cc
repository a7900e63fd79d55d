// SPDX-License-Identifier: GPL-2.0-only
#include "core/sync/policy_mutex.h"

#include <cstddef>
#include <utility>

namespace cused::sync {

static_assert(static_cast<int>(LockPolicy::kBarging) == 0);
static_assert(static_cast<int>(LockPolicy::kSpinThenPark) == 1);
static_assert(static_cast<int>(LockPolicy::kHandoff) == 2);
static_assert(static_cast<int>(LockPolicy::kSteal) == 3);
static_assert(static_cast<int>(LockPolicy::kStealWindow) == 4);

namespace {

// The alternative that runs `kPolicy`: the variant index is the policy.
template <LockPolicy kPolicy>
constexpr std::in_place_index_t<static_cast<std::size_t>(kPolicy)> alternative_of{};

}  // namespace

// The locks cannot move: each alternative is built in place (guaranteed copy elision).
PolicyMutex::Impl PolicyMutex::make(LockPolicy policy) {
  switch (policy) {
    case LockPolicy::kBarging:
      break;
    case LockPolicy::kSpinThenPark:
      return Impl(alternative_of<LockPolicy::kSpinThenPark>);
    case LockPolicy::kHandoff:
      return Impl(alternative_of<LockPolicy::kHandoff>);
    case LockPolicy::kSteal:
      return Impl(alternative_of<LockPolicy::kSteal>);
    case LockPolicy::kStealWindow:
      return Impl(alternative_of<LockPolicy::kStealWindow>,
                  StealMutex::Tuning{.steal_window = StealMutex::kDefaultStealWindow});
  }
  return Impl(alternative_of<LockPolicy::kBarging>);
}

}  // namespace cused::sync
