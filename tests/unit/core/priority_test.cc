// SPDX-License-Identifier: GPL-2.0-only
// S4.12 in the engine, with a fake host: what core asks the host to set, and can_nice()'s rule
// for threads without CAP_SYS_NICE, which the conformance suite (run as root) cannot reach.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

constexpr pid_t kManager = 100, kManagerLooper = 101;
constexpr pid_t kCaller = 200, kCallerMain = 201;

class FakePriorities final : public ThreadPriorities {
 public:
  std::optional<int> nice(pid_t tid) override { return nices[tid]; }
  NicePermission permission(pid_t) override { return allowed; }
  void set_nice(pid_t tid, int nice) override {
    nices[tid] = nice;
    sets.emplace_back(tid, nice);
  }

  std::map<pid_t, int> nices;
  NicePermission allowed;
  std::vector<std::pair<pid_t, int>> sets;
};

// A manager (node minimum 0, BINDER_SET_CONTEXT_MGR) and a caller on a driver with the fake
// host; `allowed` is what every opener may set.
struct PriorityWorld {
  explicit PriorityWorld(NicePermission allowed) : host(std::make_shared<FakePriorities>()) {
    host->allowed = allowed;
    env.driver->set_thread_priorities(host);  // before the procs open: each takes it then
    manager.emplace(env, kManager);
    caller.emplace(env, kCaller);
    binder_version version{};
    EXPECT_EQ(manager->ioctl(kManagerLooper, BINDER_VERSION, version), 0);
    EXPECT_EQ(caller->ioctl(kCallerMain, BINDER_VERSION, version), 0);
    EXPECT_EQ(manager->ioctl(kManagerLooper, BINDER_SET_CONTEXT_MGR), 0);
    Call entered = manager->write(kManagerLooper, Commands().u32(BC_ENTER_LOOPER));
    EXPECT_TRUE(entered.done());
  }

  // The caller at `nice` calls the manager; returns the manager's nice while it holds the call,
  // then replies.
  int call_at(int nice) {
    host->nices[kCallerMain] = nice;
    Call call = caller->write_read(kCallerMain, Commands().transaction(0, 1, 0));
    Call received = manager->read(kManagerLooper);
    EXPECT_TRUE(received.done());
    int during = host->nices[kManagerLooper];
    Call replied = manager->write_read(
        kManagerLooper, Commands().free_buffer(received.tr().data.ptr.buffer).reply(0, Parcel()));
    EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
    EXPECT_TRUE(call.done());
    return during;
  }

  Env env;
  std::shared_ptr<FakePriorities> host;
  std::optional<Client> manager, caller;
};

// can_nice(): without CAP_SYS_NICE and with RLIMIT_NICE 0 (every distribution's default) a
// thread may not be given any nice, and min_nice (20) is out of range: binder never touches it.
TEST(Priority, ThreadWithoutCapSysNiceOrRlimitNiceKeepsItsNice_S4_12) {
  PriorityWorld world(NicePermission{false, 0});
  world.host->nices[kManagerLooper] = 7;
  EXPECT_EQ(world.call_at(-5), 7);
  EXPECT_TRUE(world.host->sets.empty()) << world.host->sets.size() << " nice changes";
}

// RLIMIT_NICE 25 allows nice down to -5 (20 - 25): a caller at -10 makes the receiver -5, a
// caller at 3 makes it 3 (node minimum 0 is less urgent: the sender's nice counts).
TEST(Priority, RlimitNiceBoundsHowUrgentTheReceiverBecomes_S4_12) {
  PriorityWorld world(NicePermission{false, 25});
  EXPECT_EQ(world.call_at(-10), -5);
  EXPECT_EQ(world.call_at(3), 0) << "node minimum 0 is more urgent than nice 3";
}

// With CAP_SYS_NICE: the sender's nice; after the reply the receiver has its nice from before
// the call, the proc's default (the opener's 0) set while it waited for proc work.
TEST(Priority, CapSysNiceTakesTheSendersNiceAndTheReplyRestoresIt_S4_12) {
  PriorityWorld world(NicePermission{true, 0});
  world.host->nices[kManagerLooper] = 9;
  EXPECT_EQ(world.call_at(-15), -15);
  EXPECT_EQ(world.host->nices[kManagerLooper], 0);
  EXPECT_EQ(world.host->nices[kCallerMain], -15) << "the sender's own nice is not binder's";
}

}  // namespace
}  // namespace cused::core::test
