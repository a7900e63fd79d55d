// SPDX-License-Identifier: GPL-2.0-only
// binder-sendvec: libhwbinder's BM_sendVec_binder on libcused-client. A forked child serves an
// object that echoes a byte vector, registered with the device's service manager; the benchmark
// sends vectors of 4 .. 65536 bytes and checks that the same bytes come back. Needs a running
// servicemanager on the device:
//
//   binder-sendvec --device=/dev/binderfs/binder [--benchmark_... flags]
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "client/program_errors.h"
#include "client/service_manager.h"
#include "core/version.h"

namespace {

using namespace cused::client;
using namespace std::chrono_literals;

constexpr std::uint32_t kSendVecCode = 1;  // IBinder::FIRST_CALL_TRANSACTION

std::string g_device = "/dev/binder";
std::uint32_t g_handle = 0;
IpcThread* g_thread = nullptr;  // main's; benchmarks run on the main thread

std::int32_t echo(const IncomingTransaction& txn, Parcel& reply) {
  if (txn.code != kSendVecCode) return kUnknownTransaction;
  auto vector = txn.data.read_byte_array();
  if (!vector) return -22;  // BAD_VALUE
  reply.write_byte_array(*vector);
  return kOk;
}

// The child: serve the echo object until the parent kills it (or dies).
[[noreturn]] void serve(const std::string& name) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  try {
    ProcessOptions options;
    options.device = g_device;
    auto* process = new BinderProcess(options);  // lives until _exit: pool threads use it
    IpcThread thread(*process);
    ServiceManagerProxy service_manager(thread);
    if (service_manager.add_service(name, process->add_local_object(echo)) != kOk) {
      fmt::print(stderr,
                 "binder-sendvec: addService({}) failed; is servicemanager running on {}?\n", name,
                 g_device);
      _exit(EXIT_FAILURE);
    }
    process->start_thread_pool();
    thread.join_looper(true);
  } catch (const std::exception& error) {
    fmt::print(stderr, "binder-sendvec (server): {}\n", error.what());
  }
  _exit(EXIT_FAILURE);
}

void BM_sendVec(benchmark::State& state) {
  std::vector<std::byte> vector(static_cast<std::size_t>(state.range(0)), std::byte{0x5a});
  for (auto _ : state) {
    Parcel data, reply;
    data.write_byte_array(vector);
    if (std::int32_t status = g_thread->transact(g_handle, kSendVecCode, data, &reply);
        status != kOk) {
      state.SkipWithError(fmt::format("transaction failed: {}", status).c_str());
      return;
    }
    auto echoed = reply.read_byte_array();
    if (!echoed || *echoed != vector) {
      state.SkipWithError("the service echoed different bytes");
      return;
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
// Real time: the work happens in the server process and the daemon, not on this CPU clock.
BENCHMARK(BM_sendVec)->RangeMultiplier(2)->Range(4, 65536)->UseRealTime();

// Takes --device=PATH (or --device PATH) out of argv before Google Benchmark sees it.
void take_device_flag(int& argc, char** argv) {
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--device=")) {
      g_device = std::string(arg.substr(std::strlen("--device=")));
    } else if (arg == "--device" && i + 1 < argc) {
      g_device = argv[++i];
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
}

std::optional<std::uint32_t> wait_for_service(ServiceManagerProxy& service_manager,
                                              const std::string& name) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto handle = service_manager.check_service(name)) return handle;
    std::this_thread::sleep_for(10ms);
  }
  return std::nullopt;
}

// --help: this tool's own flag, then Google Benchmark's (help2man reads both).
void print_help() {
  std::printf(
      "binder-sendvec: libhwbinder's BM_sendVec_binder (byte vectors of 4..65536 bytes echoed by "
      "a service) against a live binder device that runs a servicemanager\n\n"
      "Usage: binder-sendvec [--device=PATH] [--benchmark_... flags]\n\n"
      "Options:\n"
      "  --device=PATH   binder device node (default /dev/binder)\n"
      "  --version       print the version and exit\n"
      "  --help          print this help and exit\n\n"
      "Google Benchmark's flags:\n");
  benchmark::PrintDefaultHelp();
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--version") {
      std::printf("%s\n", cused::version_text("binder-sendvec", nullptr).c_str());
      return EXIT_SUCCESS;
    }
  take_device_flag(argc, argv);
  benchmark::Initialize(&argc, argv, print_help);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return EXIT_FAILURE;

  std::string name = fmt::format("cused.sendvec.{}", getpid());
  // Before the server is forked, so that a missing one is said once, as binder-throughput does.
  cused::client::await_context_manager(g_device, 30s);
  pid_t server = fork();
  if (server < 0) return EXIT_FAILURE;
  if (server == 0) serve(name);

  int result = EXIT_FAILURE;
  try {
    ProcessOptions options;
    options.device = g_device;
    BinderProcess process(options);
    IpcThread thread(process);
    g_thread = &thread;
    ServiceManagerProxy service_manager(thread);
    if (auto handle = wait_for_service(service_manager, name)) {
      g_handle = *handle;
      benchmark::RunSpecifiedBenchmarks();
      result = EXIT_SUCCESS;
    } else {
      fmt::print(stderr, "binder-sendvec: {} did not appear on {}\n", name, g_device);
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "binder-sendvec: {}\n", error.what());
  }
  kill(server, SIGKILL);
  waitpid(server, nullptr, 0);
  benchmark::Shutdown();
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}
