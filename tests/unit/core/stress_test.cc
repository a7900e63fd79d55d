// SPDX-License-Identifier: GPL-2.0-only
// Engine-wide suite (no one core concept; docs/design.md section 7, tests/unit_test_layout.py).
// The engine under real concurrency: caller threads and pool threads of several procs issue
// ioctls at once, as the daemon's request threads do. Test threads wait on their own completions;
// the engine never blocks, and a parked read is completed by whichever thread delivers to it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

// Every lock_policy= of the proc and node locks (docs/locking.md).
class StressTest : public World, public ::testing::WithParamInterface<sync::LockPolicy> {
 protected:
  StressTest() : World(with_policy(GetParam())) {}
  static DeviceOptions with_policy(sync::LockPolicy policy) {
    DeviceOptions options;
    options.lock_policy = policy;
    return options;
  }

  // A pool thread of the manager: echoes every call's payload back in the reply, alternating
  // the legacy flow and TF_DEFER_COMPLETE, frees oneway buffers, until stopped.
  void serve(pid_t tid, std::atomic<bool>& stop, std::atomic<int>& oneways) {
    serve_until(tid, stop, oneways);
    exited++;
  }
  void serve_until(pid_t tid, std::atomic<bool>& stop, std::atomic<int>& oneways) {
    Commands pending = Commands().u32(BC_ENTER_LOOPER);
    bool defer = tid % 2;
    while (true) {
      Call call = sm.write_read(tid, pending, 512);
      call.wait();
      pending = Commands();
      ASSERT_EQ(call.result(), 0) << call.names();
      for (const Br& item : call.items()) {
        if (item.cmd != BR_TRANSACTION) continue;
        binder_transaction_data tr = item.tr();
        pending.free_buffer(tr.data.ptr.buffer);
        if (tr.flags & TF_ONE_WAY) {
          oneways++;
          continue;
        }
        Parcel echo;
        echo.data = buffer_bytes(tr);
        pending.reply(defer ? uapi::TF_DEFER_COMPLETE : 0, echo);
      }
      if (stop && pending.bytes.empty()) return;
    }
  }

  void call_many(pid_t tid, int calls, unsigned seed) {
    std::mt19937 random(seed);
    Commands pending;
    for (int i = 0; i < calls; i++) {
      Parcel parcel;
      parcel.data.resize(4 + random() % 4096);
      for (auto& byte : parcel.data) byte = static_cast<std::byte>(random());
      if (i % 5 == 0) {
        Call sent = client.write_read(tid, Commands(pending).transaction(0, 2, TF_ONE_WAY, parcel));
        sent.wait();
        ASSERT_EQ(sent.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
        pending = Commands();
        continue;
      }
      Call call = client.write_read(tid, Commands(pending).transaction(0, 1, 0, parcel));
      call.wait();
      ASSERT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
      binder_transaction_data reply = call.tr();
      ASSERT_EQ(buffer_bytes(reply), parcel.data) << "payload corrupted on call " << i;
      pending = Commands().free_buffer(reply.data.ptr.buffer);
    }
    write_ok(client, tid, pending);
  }

  std::atomic<int> exited{0};
};

// S4.4 / S4.5 / S9.9 under concurrency: every reply carries exactly its call's payload, every
// oneway arrives, nothing stays allocated.
TEST_P(StressTest, ConcurrentCallsRepliesAndOneways_S4) {
  constexpr int kCallers = 4, kPool = 3, kCalls = 150;
  std::atomic<bool> stop{false};
  std::atomic<int> oneways{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < kPool; i++)
    pool.emplace_back([&, tid = kSm + 10 + i] { serve(tid, stop, oneways); });
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; i++) {
    pid_t tid = kClient + 10 + i;
    warm(client, tid);
    callers.emplace_back([&, tid, i] { call_many(tid, kCalls, 1234 + i); });
  }
  for (auto& thread : callers) thread.join();
  // The oneways may still be on their way through the node's async queue.
  while (oneways < kCallers * kCalls / 5) std::this_thread::yield();
  stop = true;
  // S1.8: flush sends every pool thread back with BR_NOOP; one that was mid-read when a flush
  // came may park again, so flush until all are out.
  while (exited < kPool) {
    sm.proc().flush();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& thread : pool) thread.join();
  EXPECT_EQ(oneways, kCallers * kCalls / 5);
  EXPECT_EQ(client.proc().counts().buffers, 0u);
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
  EXPECT_EQ(sm.proc().counts().outstanding_txns, 0);
}

INSTANTIATE_TEST_SUITE_P(LockPolicies, StressTest, ::testing::ValuesIn(sync::kLockPolicies),
                         [](const auto& info) { return policy_param_name(info.param); });

}  // namespace
}  // namespace cused::core::test
