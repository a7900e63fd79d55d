// SPDX-License-Identifier: GPL-2.0-only
// priority=android (docs/variants.md, core/android_priority.cc): the Android common kernel's
// binder_transaction_priority / binder_do_set_priority / binder_restore_priority, extending S4.12
// to scheduling policies, with a fake host: what the serving thread is set to, and can_nice()'s
// refusal of real time to a thread without CAP_SYS_NICE or RLIMIT_RTPRIO, which the aosp14 runs
// (as root) cannot reach.
#include <gtest/gtest.h>

#include <map>

#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

constexpr pid_t kManager = 100, kManagerLooper = 101;
constexpr pid_t kCaller = 200, kCallerMain = 201;

class FakeScheduling final : public ThreadPriorities {
 public:
  std::optional<int> nice(pid_t tid) override {
    return to_userspace_prio(SCHED_OTHER, threads[tid].prio);
  }
  NicePermission permission(pid_t) override { return allowed; }
  void set_nice(pid_t tid, int nice) override {
    threads[tid] = {SCHED_OTHER, to_kernel_prio(SCHED_OTHER, nice)};
  }
  std::optional<SchedPriority> scheduling(pid_t tid) override { return threads[tid]; }
  void set_scheduling(pid_t tid, SchedPriority priority) override { threads[tid] = priority; }

  std::map<pid_t, SchedPriority> threads;
  NicePermission allowed;
};

// libbinder's setMinSchedulerPolicy(SCHED_RR, 7), plus setInheritRt(inherit_rt).
std::uint32_t rr7_flags(bool inherit_rt) {
  return (SCHED_RR << uapi::FLAT_BINDER_FLAG_SCHED_POLICY_SHIFT) | 7 |
         (inherit_rt ? uapi::FLAT_BINDER_FLAG_INHERIT_RT : 0);
}

struct World {
  World(DeviceOptions::Priority mode, NicePermission allowed, std::uint32_t node_flags)
      : env(options(mode)), host(std::make_shared<FakeScheduling>()) {
    host->allowed = allowed;
    env.driver->set_thread_priorities(host);
    manager.emplace(env, kManager);
    caller.emplace(env, kCaller);
    binder_version version{};
    EXPECT_EQ(manager->ioctl(kManagerLooper, BINDER_VERSION, version), 0);
    EXPECT_EQ(caller->ioctl(kCallerMain, BINDER_VERSION, version), 0);
    flat_binder_object node{};
    node.flags = node_flags;
    EXPECT_EQ(manager->ioctl(kManagerLooper, BINDER_SET_CONTEXT_MGR_EXT, node), 0);
    EXPECT_TRUE(manager->write(kManagerLooper, Commands().u32(BC_ENTER_LOOPER)).done());
  }
  static DeviceOptions options(DeviceOptions::Priority mode) {
    DeviceOptions o;
    o.priority = mode;
    return o;
  }
  // The caller at `priority` calls the manager: the looper's scheduling while it holds the call.
  SchedPriority call_at(SchedPriority priority) {
    host->threads[kCallerMain] = priority;
    Call call = caller->write_read(kCallerMain, Commands().transaction(0, 1, 0));
    Call received = manager->read(kManagerLooper);
    EXPECT_TRUE(received.done());
    SchedPriority during = host->threads[kManagerLooper];
    Call replied = manager->write_read(
        kManagerLooper, Commands().free_buffer(received.tr().data.ptr.buffer).reply(0, Parcel()));
    EXPECT_TRUE(call.done());
    return during;
  }
  Env env;
  std::shared_ptr<FakeScheduling> host;
  std::optional<Client> manager, caller;
};

constexpr SchedPriority kNice0{SCHED_OTHER, 120};
constexpr SchedPriority kRr7{SCHED_RR, 92}, kRr8{SCHED_RR, 91};

// BinderLibTest.SchedPolicySet's case: the node's minimum SCHED_RR 7 is more urgent than a nice-0
// caller, so the serving thread runs SCHED_RR 7; the reply gives back what it had.
TEST(AndroidPriority, NodeMinimumPolicyAppliesToTheServingThread_S4_12_ACK) {
  World world(DeviceOptions::Priority::kAndroid, {true, 0, 0}, rr7_flags(false));
  EXPECT_EQ(world.call_at(kNice0), kRr7);
  EXPECT_EQ(world.host->threads[kManagerLooper], kNice0) << "restored after the reply";
}

// BinderLibTest.InheritRt's case: a SCHED_RR 8 caller passes its policy to a node with
// inherit_rt; without it, a real-time caller counts as nice 0 and the node's minimum is not more
// urgent than the caller's own SCHED_RR 8, so the thread runs at nice 0.
TEST(AndroidPriority, RealTimeCallerInheritedOnlyWithInheritRt_S4_12_ACK) {
  World inherits(DeviceOptions::Priority::kAndroid, {true, 0, 0}, rr7_flags(true));
  EXPECT_EQ(inherits.call_at(kRr8), kRr8);
  World does_not(DeviceOptions::Priority::kAndroid, {true, 0, 0}, rr7_flags(false));
  EXPECT_EQ(does_not.call_at(kRr8), kNice0);
}

// can_nice(): without CAP_SYS_NICE real time is bounded by RLIMIT_RTPRIO; at 0 the kernel falls
// back to the most urgent nice RLIMIT_NICE allows, and with RLIMIT_NICE 0 too, changes nothing.
TEST(AndroidPriority, RealTimeRefusedWithoutCapSysNiceOrRlimitRtprio_S4_12_ACK) {
  World bounded(DeviceOptions::Priority::kAndroid, {false, 0, 5}, rr7_flags(false));
  EXPECT_EQ(bounded.call_at(kNice0), (SchedPriority{SCHED_RR, 94})) << "SCHED_RR 5, the limit";
  World nice_only(DeviceOptions::Priority::kAndroid, {false, 30, 0}, rr7_flags(false));
  EXPECT_EQ(nice_only.call_at(kNice0), (SchedPriority{SCHED_OTHER, 110})) << "nice -10";
  World neither(DeviceOptions::Priority::kAndroid, {false, 0, 0}, rr7_flags(false));
  EXPECT_EQ(neither.call_at(kNice0), kNice0) << "the proc's default it waited at, unchanged";
}

// A nested call (S4.4): the looper serving the caller at SCHED_RR 7 calls back into the caller's
// own node (inherit_rt), which reaches the caller's waiting thread. That thread runs at the
// looper's SCHED_RR 7 while it serves the nested call and its reply restores what it had before
// it (nice -5), neither the looper's nor its proc's default (nice 0); the looper keeps SCHED_RR 7
// through the nested reply and is restored to the proc's default only by its own reply.
TEST(AndroidPriority, ANestedCallsReplyRestoresEachThreadToItsOwnSavedPriority_S4_4_S4_12_ACK) {
  World world(DeviceOptions::Priority::kAndroid, {true, 0, 0}, rr7_flags(false));
  constexpr binder_uintptr_t kCallerNode = 0x1000, kCallerCookie = 0x1;
  constexpr SchedPriority kNiceMinus5{SCHED_OTHER, 115};
  world.host->threads[kCallerMain] = kNiceMinus5;
  world.host->threads[kManagerLooper] = kNice0;
  Call outer = world.caller->write_read(
      kCallerMain,
      Commands().transaction(
          0, 1, 0, Parcel().binder(kCallerNode, kCallerCookie, uapi::FLAT_BINDER_FLAG_INHERIT_RT)));
  Call received = world.manager->read(kManagerLooper);
  ASSERT_TRUE(received.done());
  ASSERT_EQ(world.host->threads[kManagerLooper], kRr7);
  // The caller's node arrived as the manager's first handle.
  Call nested = world.manager->write_read(kManagerLooper, Commands().transaction(1, 2, 0));
  ASSERT_TRUE(outer.done()) << "the nested call reaches the thread waiting for its reply";
  EXPECT_EQ(outer.tr().target.ptr, kCallerNode);
  EXPECT_EQ(world.host->threads[kCallerMain], kRr7) << "inherited from the looper";
  Call back = world.caller->write_read(
      kCallerMain, Commands().free_buffer(outer.tr().data.ptr.buffer).reply(0, Parcel()));
  EXPECT_EQ(world.host->threads[kCallerMain], kNiceMinus5)
      << "its own priority before the nested call";
  ASSERT_TRUE(nested.done());
  EXPECT_EQ(world.host->threads[kManagerLooper], kRr7) << "still serving the outer call";
  world.manager->write_read(
      kManagerLooper, Commands().free_buffer(received.tr().data.ptr.buffer).reply(0, Parcel()));
  EXPECT_EQ(world.host->threads[kManagerLooper], kNice0) << "restored by its own reply";
  EXPECT_TRUE(back.done()) << "the outer reply";
}

// Off (the default, as mainline Linux): the same node leaves the thread SCHED_OTHER.
TEST(AndroidPriority, MainlineIgnoresTheNodesPolicy_S4_12) {
  World world(DeviceOptions::Priority::kMainline, {true, 0, 0}, rr7_flags(true));
  EXPECT_EQ(world.call_at(kRr8).policy, SCHED_OTHER);
}

}  // namespace
}  // namespace cused::core::test
