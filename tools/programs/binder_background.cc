// SPDX-License-Identifier: GPL-2.0-only
// binder-background: low-priority callers of another program's services, the background traffic
// of a phone (an app at nice 19 calling system_server while a foreground app calls it too). Every
// caller thread looks up the services binderWorker0..N-1 (binderThroughputTest's and
// binder-throughput's names), calls them with a payload in a loop, and when a service goes away
// (its run ended) looks it up again, so it keeps calling whichever run is alive. Its transactions
// are allocated in the measured workers' own buffer space: they contend with the workload for the
// same proc's allocator lock, the contention the alloc-lock patch is about
// (docs/reproductions.md). Run it under `nice -n 19`; it runs until it is killed or --seconds.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "client/program_errors.h"
#include "client/service_manager.h"
#include "core/version.h"
#include "tools/programs/binder_workers.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kLookupPause = std::chrono::milliseconds(5);

struct Settings {
  std::string device = "/dev/binder";
  std::string prefix{cused::tools::kWorkerPrefix};
  int services = 2;
  int threads = 2;
  int payload = 4096;
  double seconds = 0;  // 0: until killed
};

struct Counts {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> lookups{0};
  std::atomic<std::uint64_t> gone{0};  // services that went away while called
};

// Calls `handle` until it fails (its process is gone: counted) or time is up.
void call_until_gone(cused::client::IpcThread& thread, std::uint32_t handle, int payload,
                     Clock::time_point end, Counts& counts) {
  cused::client::Parcel data;
  data.write_zeros(static_cast<std::size_t>(payload) & ~std::size_t{3});
  while (Clock::now() < end) {
    cused::client::Parcel reply;
    if (thread.transact(handle, cused::tools::kWorkerNopCode, data, &reply) != cused::client::kOk) {
      counts.gone.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    counts.calls.fetch_add(1, std::memory_order_relaxed);
  }
}

void run_caller(cused::client::BinderProcess& process, const Settings& settings, int first,
                Clock::time_point end, Counts& counts) {
  cused::client::IpcThread thread(process);
  cused::client::ServiceManagerProxy service_manager(thread);
  for (int next = first; Clock::now() < end; next = (next + 1) % settings.services) {
    counts.lookups.fetch_add(1, std::memory_order_relaxed);
    std::optional<std::uint32_t> handle =
        service_manager.check_service(cused::tools::worker_name(settings.prefix, next));
    if (!handle) {
      std::this_thread::sleep_for(kLookupPause);
      continue;
    }
    call_until_gone(thread, *handle, settings.payload, end, counts);
    thread.release(*handle);
    thread.flush();
    std::this_thread::sleep_for(kLookupPause);
  }
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  Settings settings;
  CLI::App app{
      "low-priority callers of another workload's binder services (binderWorker0..N-1), "
      "to run under nice"};
  app.set_version_flag("--version", cused::version_text("binder-background", nullptr));
  app.add_option("--device", settings.device, "binder device node")->capture_default_str();
  app.add_option("--prefix", settings.prefix, "service name prefix")->capture_default_str();
  app.add_option("--services", settings.services, "services prefix0..prefixN-1 to call")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("-t,--threads", settings.threads, "caller threads")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("-s", settings.payload, "payload size in bytes")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--seconds", settings.seconds, "stop after this long (0: run until killed)")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);

  auto end = settings.seconds > 0
                 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(settings.seconds))
                 : Clock::time_point::max();
  // A device that cannot be opened is guarded_main's line, which names the device.
  cused::client::ProcessOptions options;
  options.device = settings.device;
  cused::client::BinderProcess process(options);
  Counts counts;
  std::vector<std::jthread> callers;
  for (int i = 0; i < settings.threads; ++i)
    callers.emplace_back(
        [&, i] { run_caller(process, settings, i % settings.services, end, counts); });
  callers.clear();  // joins
  std::printf("calls: %llu lookups: %llu gone: %llu\n",
              static_cast<unsigned long long>(counts.calls.load()),
              static_cast<unsigned long long>(counts.lookups.load()),
              static_cast<unsigned long long>(counts.gone.load()));
  return EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}
