// SPDX-License-Identifier: GPL-2.0-only
// lock_policy= names (issue 9): a device variant names its lock policy with these exact strings,
// and a PolicyMutex built for a policy runs that policy.
#include "core/sync/lock_policy.h"

#include <gtest/gtest.h>

#include "core/sync/policy_mutex.h"

namespace cused::sync {
namespace {

TEST(LockPolicy, EveryPolicyParsesBackFromItsName) {
  for (LockPolicy policy : kLockPolicies) EXPECT_EQ(parse_lock_policy(to_string(policy)), policy);
}

TEST(LockPolicy, NamesAreTheDocumentedOnes) {
  EXPECT_EQ(parse_lock_policy("barging"), LockPolicy::kBarging);
  EXPECT_EQ(parse_lock_policy("spin-then-park"), LockPolicy::kSpinThenPark);
  EXPECT_EQ(parse_lock_policy("handoff"), LockPolicy::kHandoff);
  EXPECT_EQ(parse_lock_policy("steal"), LockPolicy::kSteal);
  // issue 33: "steal + handoff" of the proxy-execution table (docs/locking.md, steal-window)
  EXPECT_EQ(parse_lock_policy("steal-window"), LockPolicy::kStealWindow);
  EXPECT_EQ(lock_policy_names(), "barging|spin-then-park|handoff|steal|steal-window");
}

TEST(LockPolicy, UnknownNamesAreRejected) {
  for (const char* name :
       {"", "spin", "Barging", "handoff ", "fifo", "steal=1", "steal_window", "steal-window=2us"})
    EXPECT_EQ(parse_lock_policy(name), std::nullopt) << '"' << name << '"';
}

TEST(PolicyMutex, RunsThePolicyItWasBuiltFor) {
  EXPECT_EQ(PolicyMutex().policy(), LockPolicy::kBarging) << "the default";
  for (LockPolicy policy : kLockPolicies) EXPECT_EQ(PolicyMutex(policy).policy(), policy);
}

}  // namespace
}  // namespace cused::sync
