// SPDX-License-Identifier: GPL-2.0-only
// Issue 4's stress test, through the real daemon path: 8 client processes x 4 threads call 4
// services (each in its own process, found through tools/servicemanager) with random payloads of
// up to 256 KiB, on an in-process binderfs mount whose shrinker reclaims continuously (stress
// mode). Both sides checksum the payload: the service checks the client's checksum and replies
// with its own, the client checks that. Afterwards the test looks into core: every buffer of every
// proc came back (S9.9), the shrinker really reclaimed pages while calls ran (S9.5), and once the
// processes are gone there is no proc left and no page left on the LRU (S1.9).
//
// Two of the services reply with TF_DEFER_COMPLETE, two with the legacy flow. Runs for every
// registered allocator design that is not racy on purpose (core/alloc/designs/registry.cc): the
// first (mutex) with the barging lock policy and eager pages, the others with the kernel's mutex
// rule (steal) and lazy pages.
//   CUSED_STRESS_CALLS  calls per client thread (default 96: 3072 calls and ~380 MiB of payload
//                       per variant, about 5 s per variant on 2 loaded vCPUs)
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/crc.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "client/service_manager.h"
#include "core/alloc/designs/registry.h"
#include "core/device_variant.h"
#include "core/driver.h"
#include "core/proc.h"
#include "cused/host/shrinker_thread.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

using client::BinderProcess;
using client::IncomingTransaction;
using client::IpcThread;
using client::Parcel;
using client::ServiceManagerProxy;
using namespace std::chrono_literals;

constexpr int kClients = 8, kThreadsPerClient = 4, kServices = 4;
constexpr std::size_t kMaxPayload = 256 * 1024;
constexpr std::uint32_t kChecksummedCall = 1;

int calls_per_thread() {
  const char* text = std::getenv("CUSED_STRESS_CALLS");
  return text && *text ? std::atoi(text) : 96;
}

std::string service_name(int index) { return "cused.stress." + std::to_string(index); }

std::uint32_t checksum(std::span<const std::byte> bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

// What the children report, in memory shared with the test process (MAP_SHARED, lock-free
// atomics).
struct Tally {
  std::atomic<std::uint64_t> calls_served;     // services: transactions handled
  std::atomic<std::uint64_t> service_corrupt;  // services: payload did not match its checksum
  std::atomic<std::uint64_t> calls_answered;   // clients: replies received and checked
  std::atomic<std::uint64_t> client_corrupt;   // clients: reply checksum differed from theirs
  std::atomic<std::uint64_t> client_failed;    // clients: transact() did not return kOk
  std::atomic<std::uint64_t> bytes_sent;
};

// The test process's end of the children: a pipe they report on (one byte each: a service once
// registered, a client once done) and a pipe whose closing tells them all to exit.
class Children {
 public:
  Children() {
    if (pipe2(report_, O_CLOEXEC) != 0 || pipe2(stop_, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe");
  }
  ~Children() {
    release();
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
    close(report_[0]);
    close(report_[1]);
  }

  const std::vector<pid_t>& pids() const { return pids_; }

  // Runs `body` in a child. The body calls report_and_wait() once it is ready to be looked at
  // (its binder state still open) and returns whether it went well; a body that fails before it
  // reported is reported as failed.
  void start(const std::function<bool()>& body) {
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a test that dies takes its children along
      close(stop_[1]);
      bool ok = body();
      if (!reported_) report_and_wait(false);
      _exit(ok ? 0 : 1);
    }
    if (pid < 0) throw std::runtime_error("fork");
    pids_.push_back(pid);
  }
  // In a child: tells the test how it went, then waits until the test releases the children.
  void report_and_wait(bool ok) {
    reported_ = true;
    char byte = ok ? 1 : 0;
    if (write(report_[1], &byte, 1) != 1) _exit(3);
    char ignored;
    while (read(stop_[0], &ignored, 1) > 0) {
    }
  }
  // Reports of `count` children, each true if it went well; false on timeout.
  bool await_reports(int count, std::chrono::seconds limit, int& good) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (int got = 0; got < count; ++got) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd fd{report_[0], POLLIN, 0};
      if (left.count() <= 0 || poll(&fd, 1, static_cast<int>(left.count())) != 1) return false;
      char byte = 0;
      if (read(report_[0], &byte, 1) != 1) return false;
      good += byte;
    }
    return true;
  }
  // Lets every child exit and reaps them; returns how many exited with status 0.
  int release_and_reap() {
    release();
    int clean = 0;
    for (pid_t pid : pids_) {
      int status = 0;
      if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) ++clean;
    }
    pids_.clear();
    return clean;
  }

 private:
  void release() {
    if (stop_[1] >= 0) close(stop_[1]);
    if (stop_[0] >= 0) close(stop_[0]);
    stop_[0] = stop_[1] = -1;
  }

  int report_[2] = {-1, -1};
  int stop_[2] = {-1, -1};
  std::vector<pid_t> pids_;
  bool reported_ = false;  // in a child
};

client::ProcessOptions process_options(const std::string& device) {
  client::ProcessOptions options;
  options.device = device;
  options.max_threads = 0;
  return options;
}

// A service process: one object that checks each call's checksum and replies with its own. Eight
// client threads call each service, so it may hold 8 buffers of up to 256 KiB at once; its 4 MiB
// space always has room for them (the service frees a buffer before it replies).
bool run_service(const std::string& device, int index, Tally& tally, Children& children) {
  client::ProcessOptions options = process_options(device);
  options.map_size = core::alloc::kMaxBufferSpace;
  options.max_threads = kClients;
  options.defer_complete = index % 2 == 1;
  BinderProcess process(options);
  binder_uintptr_t object =
      process.add_local_object([&tally](const IncomingTransaction& txn, Parcel& reply) {
        if (txn.code != kChecksummedCall) return client::kUnknownTransaction;
        // A uint32 checksum, then the payload as a byte array (int32 length, bytes), read in
        // place in the binder buffer.
        auto expected = txn.data.read_uint32();
        auto size = txn.data.read_uint32();
        std::span<const std::byte> data = txn.data.data();
        std::size_t at = txn.data.read_position();
        if (!expected || !size || *size > data.size() || at > data.size() - *size) {
          tally.service_corrupt++;
          return client::kFailedTransaction;
        }
        std::uint32_t computed = checksum(data.subspan(at, *size));
        if (computed != *expected) tally.service_corrupt++;
        tally.calls_served++;
        reply.write_uint32(computed);
        return client::kOk;
      });
  {
    // Its own scope: the registration reply's BC_FREE_BUFFER goes out when the thread ends.
    IpcThread thread(process);
    auto deadline = std::chrono::steady_clock::now() + 10s;
    // Until the service manager has become the context manager, handle 0 fails.
    while (ServiceManagerProxy(thread).add_service(service_name(index), object) != client::kOk) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
  }
  process.start_thread_pool();
  children.report_and_wait(true);
  return true;
}

// One client thread: `calls` calls to `handle`, random sizes in [0, 256 KiB], random bytes.
void call_service(BinderProcess& process, std::uint32_t handle, int calls, unsigned seed,
                  Tally& tally) {
  IpcThread thread(process);
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::size_t> sizes(0, kMaxPayload);
  std::vector<std::byte> payload;
  for (int i = 0; i < calls; ++i) {
    std::size_t size = i == 0 ? kMaxPayload : sizes(random);
    payload.resize(size);
    for (std::size_t at = 0; at + 8 <= size; at += 8) {
      std::uint64_t word = random();
      std::memcpy(payload.data() + at, &word, 8);
    }
    std::uint32_t sum = checksum(payload);
    Parcel data, reply;
    data.write_uint32(sum);
    data.write_byte_array(payload);
    if (thread.transact(handle, kChecksummedCall, data, &reply) != client::kOk) {
      tally.client_failed++;
      continue;
    }
    if (reply.read_uint32() != sum) tally.client_corrupt++;
    tally.calls_answered++;
    tally.bytes_sent += size;
  }
}

bool run_client(const std::string& device, int index, int calls, Tally& tally, Children& children) {
  BinderProcess process(process_options(device));
  std::uint32_t handles[kServices];
  {
    IpcThread thread(process);
    ServiceManagerProxy sm(thread);
    for (int s = 0; s < kServices; ++s) {
      auto handle = sm.get_service(service_name(s));
      if (!handle) return false;
      handles[s] = *handle;
    }
  }
  // Thread t of client c calls service (c + t) % 4: every service has exactly 8 callers.
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreadsPerClient; ++t)
    threads.emplace_back(call_service, std::ref(process), handles[(index + t) % kServices], calls,
                         static_cast<unsigned>(index * 100 + t), std::ref(tally));
  for (auto& thread : threads) thread.join();
  children.report_and_wait(true);  // the device stays open for the test's look at the allocator
  return true;
}

// Every buffer a proc of `pid` ever got is free again: one free block spans the space.
void expect_allocator_empty(testing::MountedBinderfs& mount, pid_t pid) {
  int procs = 0;
  mount.registry().for_each_proc_of(pid, [&](core::Proc& proc) {
    ++procs;
    core::alloc::AllocatorStats stats = proc.allocator().stats();
    EXPECT_EQ(stats.allocated_buffers, 0u) << "pid " << pid;
    EXPECT_EQ(stats.allocated_bytes, 0u) << "pid " << pid;
    EXPECT_EQ(stats.free_bytes, stats.size) << "pid " << pid;
  });
  EXPECT_EQ(procs, 1) << "pid " << pid;
}

// S9.5 (reclaim never touches a page of an allocated buffer), S9.9 (every buffer freed), S1.9
// (nothing left after the processes exit), through the daemon with the shrinker in stress mode.
class DaemonStress : public ::testing::TestWithParam<std::string> {};

TEST_P(DaemonStress, S9_5_ChecksummedCallsSurviveTheStressShrinker_AndNoBufferLeaks) {
  auto variant = core::parse_device_variant(GetParam());
  ASSERT_TRUE(std::holds_alternative<core::DeviceOptions>(variant)) << GetParam();
  devices::RegistryOptions registry_options;
  registry_options.default_variant = std::get<core::DeviceOptions>(variant);
  host::ShrinkerOptions shrinker_options;
  shrinker_options.stress = true;
  core::Driver& driver = *core::Driver::shared_default();
  host::ShrinkerThread shrinker(driver.page_lru(), std::move(shrinker_options));
  testing::MountedBinderfs mount({}, {}, registry_options);
  const std::string device = mount.path("binder");
  testing::ToolProcess servicemanager(
      {testing::binary_from_env("SERVICEMANAGER_BINARY"), "--device", device});

  auto* tally = static_cast<Tally*>(
      mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(tally, MAP_FAILED);
  new (tally) Tally{};
  const int calls = calls_per_thread();
  std::uint64_t reclaimed_before = shrinker.stats().pages;
  {
    // Each set's pipes are made after the earlier set has forked, so that no service holds the
    // clients' stop pipe open (the clients are released first, then the services).
    Children services;
    for (int s = 0; s < kServices; ++s)
      services.start([&, s] { return run_service(device, s, *tally, services); });
    int good = 0;
    ASSERT_TRUE(services.await_reports(kServices, 20s, good)) << "services did not register";
    ASSERT_EQ(good, kServices) << "a service could not register";

    Children clients;
    for (int c = 0; c < kClients; ++c)
      clients.start([&, c] { return run_client(device, c, calls, *tally, clients); });
    good = 0;
    ASSERT_TRUE(clients.await_reports(kClients, 45s, good)) << "clients did not finish";
    EXPECT_EQ(good, kClients) << "a client could not find the services";

    // Everyone is done and idle, no process has exited yet: all buffers are back.
    for (pid_t pid : services.pids()) expect_allocator_empty(mount, pid);
    for (pid_t pid : clients.pids()) expect_allocator_empty(mount, pid);
    EXPECT_EQ(clients.release_and_reap(), kClients);
    EXPECT_EQ(services.release_and_reap(), kServices);
  }
  const std::uint64_t total = std::uint64_t{kClients} * kThreadsPerClient * calls;
  EXPECT_EQ(tally->client_failed.load(), 0u);
  EXPECT_EQ(tally->calls_answered.load(), total);
  EXPECT_EQ(tally->calls_served.load(), total);
  EXPECT_EQ(tally->service_corrupt.load(), 0u);
  EXPECT_EQ(tally->client_corrupt.load(), 0u);
  // The shrinker did reclaim while the calls ran; otherwise this test proves nothing about it.
  EXPECT_GT(shrinker.stats().pages, reclaimed_before);
  std::printf("stress: %llu calls, %.1f MiB of payload, shrinker punched %llu pages\n",
              static_cast<unsigned long long>(tally->calls_answered.load()),
              static_cast<double>(tally->bytes_sent.load()) / (1 << 20),
              static_cast<unsigned long long>(shrinker.stats().pages - reclaimed_before));
  munmap(tally, sizeof(Tally));

  servicemanager.finish(0ms);  // kills it
  EXPECT_TRUE(mount.wait_for_open_procs(0)) << driver.proc_count() << " procs left";
  // A proc's pages leave the LRU when the proc object goes, at the end of its release (after
  // the driver stopped counting it).
  EXPECT_TRUE(testing::wait_until([&] { return driver.page_lru().size() == 0; }))
      << driver.page_lru().size() << " pages left on the LRU";
}

// Every design that must lose nothing, as a variant spec.
std::vector<std::string> stress_variants() {
  std::vector<std::string> specs;
  for (const core::alloc::Design& design : core::alloc::designs()) {
    if (design.racy_on_purpose) continue;
    specs.push_back("alloc_lock=" + std::string(design.name) +
                    (specs.empty() ? ",lock_policy=barging" : ",pages=lazy,lock_policy=steal"));
  }
  return specs;
}

INSTANTIATE_TEST_SUITE_P(Variants, DaemonStress, ::testing::ValuesIn(stress_variants()),
                         [](const auto& info) {
                           const std::string prefix = "alloc_lock=";
                           std::string name = info.param.substr(
                               prefix.size(), info.param.find(',') - prefix.size());
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace cused
