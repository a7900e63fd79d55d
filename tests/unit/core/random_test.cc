// SPDX-License-Identifier: GPL-2.0-only
// Engine-wide suite (no one core concept; docs/design.md section 7, tests/unit_test_layout.py).
// Random command streams against the engine (docs/design.md section 7, "never crash, leak or lose a
// buffer on any input"): three procs with a few threads each send random transactions carrying
// random (often malformed) objects, reply, free real and bogus buffers, change ref counts on
// random handles, register and clear death notifications, exit threads, flush, interrupt and
// release procs. Whatever happens, every request must be answered once parked reads are woken,
// the counters must stay sane, and tearing everything down must leave nothing behind (ASan's
// leak check).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

// Random parcels and command streams: mostly well formed, often not.
class Generator {
 public:
  explicit Generator(unsigned seed) : random_(seed) {}

  std::uint32_t pick(std::uint32_t n) { return random_() % n; }
  std::uint64_t next() { return random_(); }

  Parcel random_parcel() {
    Parcel parcel;
    parcel.u64(random_());
    if (pick(3)) {  // most are well formed: data and at most one object of a sane kind
      if (pick(2)) parcel.binder(0x100 * (1 + pick(4)), 0x7);
      return parcel.u32(random_());
    }
    int objects = pick(4);
    for (int i = 0; i < objects; i++) {
      switch (pick(8)) {
        case 0:
          parcel.binder(0x100 * (1 + pick(4)), 0x7 + pick(2), pick(2) ? 0 : 0x100);
          break;
        case 1:
          parcel.weak_binder(0x100 * (1 + pick(4)), 0x7);
          break;
        case 2:
          parcel.handle(pick(5));
          break;
        case 3:
          parcel.weak_handle(pick(5));
          break;
        case 4:
          parcel.ptr(&scratch_, pick(2) ? sizeof scratch_ : 0,
                     pick(2) ? std::optional<binder_size_t>(pick(3)) : std::nullopt, pick(24));
          break;
        case 5:
          parcel.fd(0);
          break;
        case 6:
          parcel.fda(pick(3), pick(3), pick(16));
          break;
        default:
          parcel.u32(random_()).offset(pick(64));  // garbage offset
          break;
      }
    }
    return parcel;
  }

  Commands random_commands(std::vector<binder_uintptr_t>& buffers) {
    Commands commands;
    int count = 1 + pick(3);
    for (int i = 0; i < count; i++) {
      std::uint32_t dice = pick(100);
      if (dice < 40) {
        commands.transaction(pick(5) ? 0 : pick(4), pick(5), pick(2) ? TF_ONE_WAY : 0,
                             random_parcel());
      } else if (dice < 48) {
        commands.transaction_sg(pick(5) ? 0 : pick(4), 1, pick(2) ? TF_ONE_WAY : 0, random_parcel(),
                                8 * pick(16));
      } else if (dice < 60) {
        if (!buffers.empty()) {
          std::size_t i = pick(buffers.size());
          commands.free_buffer(buffers[i]);
          buffers.erase(buffers.begin() + i);
        } else {
          commands.free_buffer(random_());
        }
      } else if (dice < 70) {
        commands.ref(BC_INCREFS + pick(4), pick(5));
      } else if (dice < 75) {
        commands.done(pick(2) ? BC_INCREFS_DONE : BC_ACQUIRE_DONE, 0x100 * (1 + pick(4)), 0x7);
      } else if (dice < 80) {
        commands.u32(BC_REGISTER_LOOPER + pick(3));
      } else if (dice < 88) {
        commands.death(pick(2) ? BC_REQUEST_DEATH_NOTIFICATION : BC_CLEAR_DEATH_NOTIFICATION,
                       pick(5), pick(3));
      } else if (dice < 92) {
        commands.dead_binder_done(pick(3));
      } else if (dice < 96) {
        commands.reply(pick(2) ? uapi::TF_DEFER_COMPLETE : 0, random_parcel());
      } else if (dice < 98) {
        commands.u32(random_());  // an unknown command: EINVAL
      }
    }
    return commands;
  }

 private:
  std::mt19937 random_;
  std::array<std::uint64_t, 4> scratch_{};
};

class RandomScript {
 public:
  explicit RandomScript(unsigned seed) : gen_(seed) {
    for (int i = 0; i < 3; i++) open(i);
  }

  void run(int steps) {
    for (int step = 0; step < steps; step++) one_step();
  }

  int delivered() const { return delivered_; }

  void finish() {
    for (auto& proc : procs_) proc->release();
    for (const auto& threads : parked_) {
      for (const auto& call : threads) {
        EXPECT_TRUE(!call || call->done()) << "a request was never answered";
      }
    }
  }

 private:
  static constexpr int kThreads = 3;
  pid_t pid(int p) const { return 1000 + 100 * p + generation_[p] * 1000; }
  pid_t tid(int p, int t) const { return pid(p) + 1 + t; }

  void open(int p) {
    procs_[p] = std::make_unique<Client>(env_, pid(p));
    if (p == 0) procs_[0]->ioctl(tid(0, 0), BINDER_SET_CONTEXT_MGR);
  }

  std::uint32_t pick(std::uint32_t n) { return gen_.pick(n); }
  Parcel random_parcel() { return gen_.random_parcel(); }
  Commands random_commands(int p) { return gen_.random_commands(buffers_[p]); }

  // Remembers the buffers a read delivered, so that later steps free them (or not), and whether
  // the thread now serves a sync call.
  void collect(int p, int t, const Call& call) {
    if (!call.done() || call.result() != 0) return;
    for (const Br& item : call.items()) {
      if (item.cmd == BR_TRANSACTION || item.cmd == BR_REPLY ||
          item.cmd == BR_TRANSACTION_SEC_CTX) {
        buffers_[p].push_back(item.tr().data.ptr.buffer);
        delivered_++;
        if (item.cmd != BR_REPLY && !(item.tr().flags & TF_ONE_WAY)) serving_[p][t] = true;
      }
    }
  }

  // Mostly what a binder thread would do next: answer the call it serves, or make a call of its
  // own, or wait; sometimes anything at all.
  Commands next_commands(int p, int t) {
    Commands commands;
    if (serving_[p][t] && pick(4)) {
      if (!buffers_[p].empty()) {
        commands.free_buffer(buffers_[p].back());
        buffers_[p].pop_back();
      }
      commands.reply(pick(2) ? uapi::TF_DEFER_COMPLETE : 0, random_parcel());
      serving_[p][t] = false;
    }
    Commands more = random_commands(p);
    commands.bytes.insert(commands.bytes.end(), more.bytes.begin(), more.bytes.end());
    kept_.push_back(std::move(more));  // its payloads must outlive the ioctl
    return commands;
  }

  void park(int p, int t, Call call) {
    collect(p, t, call);
    if (!call.done()) parked_[p][t] = std::move(call);
  }

  void one_step() {
    int p = pick(3);
    int t = pick(kThreads);
    // A real thread waits in its parked ioctl; only rarely does the script talk over it: it
    // picks a free thread, and when all are parked, flushes a proc.
    for (int tries = 0; parked_[p][t] && pick(16) && tries < 3 * kThreads; tries++) {
      p = pick(3);
      t = pick(kThreads);
    }
    if (parked_[p][t] && pick(16)) {
      procs_[p]->proc().flush();
      return collect_parked();
    }
    pid_t tid = this->tid(p, t);
    Client& client = *procs_[p];
    switch (pick(10)) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
        park(p, t,
             client.write_read(tid, next_commands(p, t), pick(2) ? 256 : 64 + pick(64),
                               /*nonblock=*/pick(4) == 0));
        break;
      case 5:
        park(p, t, client.read(tid, 256, pick(2)));
        break;
      case 6:
        client.ioctl(tid, BINDER_THREAD_EXIT);
        serving_[p][t] = false;
        break;
      case 7:
        if (pick(2))
          client.proc().flush();
        else
          client.proc().poll(tid, nullptr);
        break;
      case 8:
        if (parked_[p][t]) client.interrupt(tid, *parked_[p][t]);
        break;
      case 9:
        if (pick(8) == 0) {
          client.release();
          for (int i = 0; i < kThreads; i++) {
            if (parked_[p][i]) {
              EXPECT_TRUE(parked_[p][i]->done()) << "not answered at release";
            }
            parked_[p][i].reset();
            serving_[p][i] = false;
          }
          generation_[p]++;
          buffers_[p].clear();
          open(p);
        }
        break;
    }
    kept_.clear();
    collect_parked();
    ProcCounts counts = procs_[p]->proc().counts();  // `client` may have been reopened
    EXPECT_GE(counts.outstanding_txns, 0);
  }

  // Parked calls end up answered (woken, flushed or released); collect what they returned.
  void collect_parked() {
    for (int q = 0; q < 3; q++) {
      for (int i = 0; i < kThreads; i++) {
        if (!parked_[q][i] || !parked_[q][i]->done()) continue;
        collect(q, i, *parked_[q][i]);
        parked_[q][i].reset();
      }
    }
  }

  Generator gen_;
  Env env_;
  std::array<std::unique_ptr<Client>, 3> procs_;
  std::array<int, 3> generation_{};
  std::array<std::vector<binder_uintptr_t>, 3> buffers_;
  std::array<std::array<std::optional<Call>, kThreads>, 3> parked_;
  std::array<std::array<bool, kThreads>, 3> serving_{};
  std::vector<Commands> kept_;
  int delivered_ = 0;
};

// S3, S4, S5, S6, S7 under random input: no crash, every request answered, nothing left behind.
// CUSED_RANDOM_SEEDS=N runs more seeds (a longer hunt than the unit suite's).
TEST(RandomScripts, NoCrashNoLeakEveryRequestAnswered_S3_S4_S5) {
  const char* env = std::getenv("CUSED_RANDOM_SEEDS");
  const unsigned seeds = env ? std::strtoul(env, nullptr, 10) : 40;
  long delivered = 0;
  for (unsigned seed = 1; seed <= seeds; seed++) {
    SCOPED_TRACE(seed);
    RandomScript script(seed);
    script.run(400);
    delivered += script.delivered();
    script.finish();
  }
  // The scripts must reach the delivery paths, not only the error paths.
  EXPECT_GT(delivered, 20L * seeds);
  std::printf("%ld transactions and replies delivered over %u scripts\n", delivered, seeds);
}

// The same streams from real threads at once (three procs, three threads each): the lock order
// holds (no deadlock), ThreadSanitizer finds no race, and every request is answered. A thread
// whose read stays parked for a while interrupts itself, as a signal would (S1.12).
class ConcurrentRandom : public ::testing::TestWithParam<sync::LockPolicy> {};

TEST_P(ConcurrentRandom, ThreadsNoDeadlock_S3_S4) {
  constexpr int kProcs = 3, kThreads = 3, kSteps = 300;
  DeviceOptions options;
  options.lock_policy = GetParam();
  Env env(options);
  std::array<std::unique_ptr<Client>, kProcs> procs;
  for (int p = 0; p < kProcs; p++) procs[p] = std::make_unique<Client>(env, 1000 + 100 * p);
  procs[0]->ioctl(1001, BINDER_SET_CONTEXT_MGR);
  std::atomic<long> delivered{0};
  auto worker = [&](int p, int t) {
    Generator gen(7919 * (p * kThreads + t + 1));
    Client& client = *procs[p];
    const pid_t tid = 1000 + 100 * p + 1 + t;
    std::vector<binder_uintptr_t> buffers;
    bool serving = false;
    for (int step = 0; step < kSteps; step++) {
      Commands commands;
      if (serving && gen.pick(4)) {
        commands.reply(gen.pick(2) ? uapi::TF_DEFER_COMPLETE : 0, gen.random_parcel());
        serving = false;
      }
      Commands more = gen.random_commands(buffers);
      commands.bytes.insert(commands.bytes.end(), more.bytes.begin(), more.bytes.end());
      Call call = client.write_read(tid, commands, 256, /*nonblock=*/gen.pick(3) == 0);
      for (int spin = 0; !call.done() && spin < 100; spin++)
        std::this_thread::sleep_for(std::chrono::microseconds(10));
      if (!call.done()) client.interrupt(tid, call);
      call.wait();
      if (call.result() != 0) continue;
      for (const Br& item : call.items()) {
        if (item.cmd != BR_TRANSACTION && item.cmd != BR_REPLY) continue;
        buffers.push_back(item.tr().data.ptr.buffer);
        delivered++;
        if (item.cmd == BR_TRANSACTION && !(item.tr().flags & TF_ONE_WAY)) serving = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int p = 0; p < kProcs; p++)
    for (int t = 0; t < kThreads; t++) threads.emplace_back(worker, p, t);
  for (auto& thread : threads) thread.join();
  for (auto& client : procs) client->release();
  EXPECT_GT(delivered, 10);
  std::printf("%ld transactions and replies delivered\n", delivered.load());
}

INSTANTIATE_TEST_SUITE_P(LockPolicies, ConcurrentRandom, ::testing::ValuesIn(sync::kLockPolicies),
                         [](const auto& info) { return policy_param_name(info.param); });

}  // namespace
}  // namespace cused::core::test
