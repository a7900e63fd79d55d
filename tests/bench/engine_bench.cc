// SPDX-License-Identifier: GPL-2.0-only
// The protocol engine's own cost per transaction, in-process (no FUSE): one test thread plays a
// client and a manager of one device, as in tests/unit/core, and drives sync calls through the
// engine the way libbinder does: the client's BC_TRANSACTION wakes the manager's parked read,
// the manager's BC_REPLY wakes the client's. Legacy flow: 3 ioctls per call (call, reply, read
// again); TF_DEFER_COMPLETE: 2 (the reply's ioctl goes on to wait). Oneways: 2 ioctls (send,
// read+free). User memory is reached with process_vm_readv/writev on our own pid and the buffer
// space is a memfd, as the daemon does for its callers (the harness's Backing; core's unit tests
// run on fakes instead).
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <utility>

#include "cused/host/memfd_buffer_file.h"
#include "cused/process_memory.h"
#include "tests/bench/bench_variant.h"
#include "tests/unit/core/harness.h"

namespace cused::core::test {
namespace {

// The daemon's buffer store and user memory under the harness's clients, so the numbers are what
// the daemon pays (and the memfd's pages stay out of the heap BM_IdleProcHeap counts).
Backing daemon_backing() {
  return {[](std::size_t space) -> std::unique_ptr<BufferFile> {
            return host::MemfdBufferFile::create("cused-bench", space);
          },
          std::make_shared<ProcessMemory>(getpid())};
}

constexpr pid_t kSm = 100, kSmLooper = 101, kClient = 200, kClientMain = 201;

struct Pair {
  Env env;
  Client sm{env, kSm};
  Client client{env, kClient};
  explicit Pair(DeviceOptions options = bench::bench_variant())
      : env(std::move(options), daemon_backing()) {
    sm.ioctl(kSmLooper, BINDER_SET_CONTEXT_MGR);
    binder_version version{};
    sm.ioctl(kSmLooper, BINDER_VERSION, version);
    client.ioctl(kClientMain, BINDER_VERSION, version);
  }
};

void sync_calls(benchmark::State& state, std::uint32_t reply_flags,
                DeviceOptions options = bench::bench_variant()) {
  Pair pair(std::move(options));
  Parcel payload;
  payload.data.resize(state.range(0));
  Call served = pair.sm.write_read(kSmLooper, Commands().u32(BC_ENTER_LOOPER));
  Commands client_pending;
  for (auto _ : state) {
    Call call =
        pair.client.write_read(kClientMain, Commands(client_pending).transaction(0, 1, 0, payload));
    binder_transaction_data tr = served.tr();
    served = pair.sm.write_read(
        kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply(reply_flags, payload));
    if (!reply_flags) served = pair.sm.read(kSmLooper);  // the legacy flow's third ioctl
    client_pending = Commands().free_buffer(call.tr().data.ptr.buffer);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_SyncCall(benchmark::State& state) { sync_calls(state, 0); }
void BM_SyncCallDeferComplete(benchmark::State& state) {
  sync_calls(state, uapi::TF_DEFER_COMPLETE);
}
// The legacy call on a spin design (alloc_lock=spin-install): its allocator sections take the
// spinlock (core/alloc/alloc_lock.h). This thread registers no preemption control (it serves no
// less urgent caller), so the sections cost the lock and one thread-local load each.
void BM_SyncCallSpinInstall(benchmark::State& state) {
  DeviceOptions options;
  options.alloc.lock = alloc::LockVariant::named("spin-install");
  sync_calls(state, 0, std::move(options));
}

void BM_Oneway(benchmark::State& state) {
  Pair pair;
  Parcel payload;
  payload.data.resize(state.range(0));
  Call served = pair.sm.write_read(kSmLooper, Commands().u32(BC_ENTER_LOOPER));
  for (auto _ : state) {
    pair.client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY, payload));
    served = pair.sm.write_read(kSmLooper, Commands().free_buffer(served.tr().data.ptr.buffer));
  }
  state.SetItemsProcessed(state.iterations());
}

// The floor: one process_vm_readv / process_vm_writev of 8 bytes, what the engine pays for every
// access to a caller's memory (a sync call needs six, S3.6: commands and payload in on each side,
// one BR_ stream out to each side).
void BM_ProcessVmReadv(benchmark::State& state) {
  ProcessMemory memory(getpid());
  std::uint64_t source = 1, target = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(memory.read(reinterpret_cast<std::uint64_t>(&source), &target, 8));
}
void BM_ProcessVmWritev(benchmark::State& state) {
  ProcessMemory memory(getpid());
  std::uint64_t source = 1, target = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(memory.write(reinterpret_cast<std::uint64_t>(&target), &source, 8));
}

// Daemon heap per idle proc (issue 4: target under 64 KiB, buffer pages excluded): procs that did
// a BINDER_VERSION (argument 0) or also one call to the manager whose reply mapped their buffer
// space (argument 1, the allocator's page metadata included), divided by the procs. malloc's
// in-use bytes; the memfd and its mappings are not heap and are not counted.
void BM_IdleProcHeap(benchmark::State& state) {
  constexpr int kProcs = 100;
  const bool mapped = state.range(0);
  for (auto _ : state) {
    Env env{{}, daemon_backing()};
    Client sm{env, kSm};
    sm.ioctl(kSmLooper, BINDER_SET_CONTEXT_MGR);
    const std::size_t before = mallinfo2().uordblks;
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < kProcs; i++) {
      const pid_t pid = 1000 + i;
      auto& client = *clients.emplace_back(std::make_unique<Client>(env, pid));
      binder_version version{};
      client.ioctl(pid, BINDER_VERSION, version);
      if (!mapped) continue;
      Call call = client.write_read(pid, Commands().transaction(0, 1, 0));
      binder_transaction_data tr = sm.read(kSmLooper).tr();
      sm.write_read(kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
      client.write(pid, Commands().free_buffer(call.tr().data.ptr.buffer));
    }
    const std::size_t after = mallinfo2().uordblks;
    state.counters["heap_bytes_per_proc"] =
        static_cast<double>(after - before) / static_cast<double>(kProcs);
  }
}
BENCHMARK(BM_IdleProcHeap)->Arg(0)->Arg(1)->Iterations(1);

BENCHMARK(BM_ProcessVmReadv);
BENCHMARK(BM_ProcessVmWritev);
BENCHMARK(BM_SyncCall)->Arg(4)->Arg(4096)->Arg(65536);
BENCHMARK(BM_SyncCallDeferComplete)->Arg(4)->Arg(4096)->Arg(65536);
BENCHMARK(BM_SyncCallSpinInstall)->Arg(4)->Arg(4096);
BENCHMARK(BM_Oneway)->Arg(4)->Arg(4096);

}  // namespace
}  // namespace cused::core::test

BENCHMARK_MAIN();
