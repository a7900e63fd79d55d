#include "core/sync/policy_mutex.h"

namespace cused::sync {

static_assert(static_cast<int>(LockPolicy::kBarging) == 0);
static_assert(static_cast<int>(LockPolicy::kSpinThenPark) == 1);
static_assert(static_cast<int>(LockPolicy::kHandoff) == 2);
static_assert(static_cast<int>(LockPolicy::kSteal) == 3);

// The locks cannot move: each alternative is built in place (guaranteed copy elision).
PolicyMutex::Impl PolicyMutex::make(LockPolicy policy) {
  switch (policy) {
    case LockPolicy::kBarging:
      break;
    case LockPolicy::kSpinThenPark:
      return Impl(std::in_place_type<SpinThenParkMutex>);
    case LockPolicy::kHandoff:
      return Impl(std::in_place_type<HandoffMutex>);
    case LockPolicy::kSteal:
      return Impl(std::in_place_type<StealMutex>);
  }
  return Impl(std::in_place_type<Mutex>);
}

}  // namespace cused::sync
