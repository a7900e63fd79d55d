// SPDX-License-Identifier: GPL-2.0-only
// core/invariants.h: the checker the fuzzer relies on passes on real protocol states and reports
// what is left behind when it should not be.
#include "core/invariants.h"

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

class Invariants : public World {};

std::string joined(const Violations& found) {
  std::string out;
  for (const auto& line : found) out += line + "\n";
  return out;
}

// S6.1-S6.5: a published and fetched service, with a call in flight, is consistent everywhere.
TEST_F(Invariants, HoldAcrossPublishFetchAndACallInFlight_S6) {
  std::uint32_t handle = fetch(publish());
  Call call = client.write_read(kClientMain, Commands().transaction(handle, 1, 0));
  binder_transaction_data tr = read_now(server, kServerLooper).tr();
  for (Client* who : {&sm, &server, &client})
    EXPECT_EQ(joined(InvariantChecker::check(who->proc())), "");
  write_ok(server, kServerLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
  ASSERT_TRUE(call.done());
  for (Client* who : {&sm, &server, &client})
    EXPECT_EQ(joined(InvariantChecker::check(who->proc())), "");
}

// S1.9: a live server still has its node and threads, with a oneway in flight; after release
// nothing is left.
TEST_F(Invariants, ReleasedCheckSeesWhatALiveProcHoldsAndNothingAfterRelease_S1_9) {
  publish();
  Call sent = server.write_read(kServerLooper, Commands().transaction(0, 5, TF_ONE_WAY));
  Violations live = InvariantChecker::check_released(server.proc());
  EXPECT_NE(joined(live).find("nodes left"), std::string::npos) << joined(live);
  EXPECT_NE(joined(live).find("threads left"), std::string::npos) << joined(live);
  for (Client* who : {&sm, &server, &client}) {
    who->release();
    EXPECT_EQ(joined(InvariantChecker::check_released(who->proc())), "");
  }
}

}  // namespace
}  // namespace cused::core::test
