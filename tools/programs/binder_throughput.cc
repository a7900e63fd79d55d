// SPDX-License-Identifier: GPL-2.0-only
// binder-throughput: AOSP's binderThroughputTest rebuilt on libcused-client, with its flags and
// output (-w workers, -i iterations, -s payload bytes, -p client/server pairs, -t training round,
// -m max latency in us; "iterations per sec: N", "average:..ms worst:..ms best:..ms", the
// percentile line). Workers are forked processes; each serves a no-op object registered with the
// service manager as binderWorker<N> and calls the others. Extras: --device, --defer-complete
// (servers reply with TF_DEFER_COMPLETE), --inherit-rt (the services allow real-time inheritance:
// FLAT_BINDER_FLAG_INHERIT_RT, priority=android), --wait-for-manager, "ioctls per transaction: N"
// (every worker's BINDER_WRITE_READ calls, serving included, over the transactions made) and
// "precise latency percentiles (us, within 0.4 %): P50 X P90 X P99 X P99.9 X"
// (tools/programs/latency_histogram.h).
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "client/program_errors.h"
#include "client/service_manager.h"
#include "core/version.h"
#include "tools/programs/binder_throughput_results.h"
#include "tools/programs/binder_workers.h"

namespace {

using cused::tools::kWorkerNopCode;
using cused::tools::kWorkerPrefix;
using cused::tools::ThroughputResults;
using cused::tools::worker_name;
using Clock = std::chrono::steady_clock;

struct Settings {
  int workers = 2;
  int iterations = 10000;
  int payload = 0;
  bool pairs = false;
  bool training = false;
  std::uint64_t max_latency_us = 50000;
  std::string device = "/dev/binder";
  bool defer_complete = false;
  bool inherit_rt = false;
  int wait_for_manager_seconds = 30;
  const char* argv0 = "binder-throughput";
};

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "binder-throughput: %s\n", why.c_str());
  std::fflush(stdout);
  _exit(EXIT_FAILURE);
}

// One end of a worker's two pipes: master and worker step each other through the phases.
class Channel {
 public:
  // `peer` names the other end for the message when it ends early ("worker 1", "the master").
  Channel(int read_fd, int write_fd, std::string peer)
      : read_fd_(read_fd), write_fd_(write_fd), peer_(std::move(peer)) {}
  void close_both() {
    close(read_fd_);
    close(write_fd_);
  }
  void signal() const { send(true); }
  void wait() const {
    bool value;
    receive(value);
  }
  template <typename T>
  void send(const T& value) const {
    if (write(write_fd_, &value, sizeof value) != static_cast<ssize_t>(sizeof value))
      fail(peer_ + " ended early (its message, if it had one, is above)");
  }
  // A short read means the other side died: nothing later can be trusted.
  template <typename T>
  void receive(T& value) const {
    auto* bytes = reinterpret_cast<char*>(&value);
    std::size_t done = 0;
    while (done < sizeof value) {
      ssize_t got = read(read_fd_, bytes + done, sizeof value - done);
      if (got <= 0) fail(peer_ + " ended early (its message, if it had one, is above)");
      done += static_cast<std::size_t>(got);
    }
  }

 private:
  int read_fd_;
  int write_fd_;
  std::string peer_;
};

std::chrono::seconds manager_wait(const Settings& settings) {
  return std::chrono::seconds(settings.wait_for_manager_seconds);
}

[[noreturn]] void run_worker(int num, const Settings& settings, const Channel& channel) {
  cused::client::ProcessOptions options;
  options.device = settings.device;
  options.defer_complete = settings.defer_complete;
  // Deliberately leaked: the pool threads use it until _exit.
  auto* process = new cused::client::BinderProcess(options);
  process->start_thread_pool();
  cused::client::IpcThread thread(*process);
  cused::client::ServiceManagerProxy service_manager(thread);
  auto object = process->add_local_object(
      [](const cused::client::IncomingTransaction& txn, cused::client::Parcel&) {
        return txn.code == kWorkerNopCode ? cused::client::kOk : cused::client::kUnknownTransaction;
      },
      settings.inherit_rt ? cused::client::kInheritRtObjectFlags
                          : cused::client::kDefaultObjectFlags);
  // The master saw it answer; quietly wait again in case it was just restarted.
  if (!service_manager.wait_until_answering(manager_wait(settings), nullptr))
    fail(fmt::format("worker {}: the context manager on {} stopped answering", num,
                     settings.device));
  if (std::int32_t status = service_manager.add_service(worker_name(kWorkerPrefix, num), object);
      status != 0)
    fail(fmt::format("worker {}: addService failed with status {}", num, status));
  // Counted from here: no worker calls another before the master's go, while after it a faster
  // worker may already be calling this one's pool thread while this one looks up its targets.
  std::uint64_t ioctls_at_start = process->ioctl_count();
  channel.signal();
  channel.wait();

  int server_count = settings.pairs ? settings.workers / 2 : settings.workers;
  std::printf("Created BinderWorker%d\n", num);
  std::fflush(stdout);
  std::vector<std::uint32_t> targets;
  for (int i = 0; i < server_count; ++i) {
    if (i == num) continue;
    auto handle = service_manager.get_service(worker_name(kWorkerPrefix, i));
    if (!handle)
      fail(fmt::format("worker {}: getService({}) failed", num, worker_name(kWorkerPrefix, i)));
    targets.push_back(*handle);
  }
  bool is_client = !settings.pairs || num >= server_count;
  if (is_client && targets.empty()) fail("no other worker to call (use -w 2 or more)");

  ThroughputResults results;
  results.max_latency_ns = settings.max_latency_us * 1000;
  std::minstd_rand random(static_cast<unsigned>(num));
  for (int i = 0; is_client && i < settings.iterations; ++i) {
    cused::client::Parcel data, reply;
    std::size_t target =
        settings.pairs ? static_cast<std::size_t>(num % server_count) : random() % targets.size();
    data.write_zeros(static_cast<std::size_t>(settings.payload) & ~std::size_t{3});
    auto start = Clock::now();
    std::int32_t status = thread.transact(targets[target], kWorkerNopCode, data, &reply);
    auto end = Clock::now();
    results.add(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count()));
    if (status < 0 && cused::client::binder_daemon_gone(-status))
      fail(fmt::format("worker {}: {}", num,
                       cused::client::describe_daemon_gone(settings.device, -status)));
    if (status != cused::client::kOk)
      fail(fmt::format("thread {} failed {} i : {}", num, status, i));
  }
  // Done; once the master says everyone is, no transaction is left in flight.
  channel.signal();
  channel.wait();
  results.ioctls = process->ioctl_count() - ioctls_at_start;
  channel.send(results);
  channel.wait();
  std::fflush(stdout);
  _exit(EXIT_SUCCESS);
}

Channel start_worker(int num, const Settings& settings, std::vector<Channel>& started) {
  int to_worker[2], to_master[2];
  if (pipe(to_worker) < 0 || pipe(to_master) < 0) fail("pipe failed");
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) fail("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (auto& other : started) other.close_both();
    close(to_worker[1]);
    close(to_master[0]);
    Channel channel(to_worker[0], to_master[1], "the master");
    _exit(cused::client::guarded_main(settings.argv0,
                                      [&]() -> int { run_worker(num, settings, channel); }));
  }
  close(to_worker[0]);
  close(to_master[1]);
  return Channel(to_master[0], to_worker[1], fmt::format("worker {}", num));
}

void wait_all(const std::vector<Channel>& channels) {
  for (const auto& channel : channels) channel.wait();
}

void signal_all(const std::vector<Channel>& channels) {
  for (const auto& channel : channels) channel.signal();
}

// One round: spawn, run, collect. Returns the merged results; false if a worker failed.
bool run_round(const Settings& settings, ThroughputResults& total) {
  std::vector<Channel> channels;
  for (int i = 0; i < settings.workers; ++i)
    channels.push_back(start_worker(i, settings, channels));
  wait_all(channels);

  std::printf("waiting for workers to complete\n");
  std::fflush(stdout);
  auto start = Clock::now();
  signal_all(channels);
  wait_all(channels);
  auto end = Clock::now();
  double seconds = std::chrono::duration<double>(end - start).count();
  double per_second = static_cast<double>(settings.iterations) * settings.workers / seconds;
  std::printf("iterations per sec: %s\n", fmt::format("{:g}", per_second).c_str());

  std::printf("collecting results\n");
  signal_all(channels);
  total = ThroughputResults{};
  total.max_latency_ns = settings.max_latency_us * 1000;
  for (const auto& channel : channels) {
    ThroughputResults part;
    channel.receive(part);
    total.merge(part);
  }

  std::printf("killing workers\n");
  std::fflush(stdout);
  signal_all(channels);
  bool all_ok = true;
  for (int i = 0; i < settings.workers; ++i) {
    int status = 0;
    wait(&status);
    if (status != 0) {
      std::printf("nonzero child status%d\n", status);
      all_ok = false;
    }
  }
  for (auto& channel : channels) channel.close_both();
  return all_ok;
}

int run(int argc, char** argv) {
  Settings settings;
  settings.argv0 = argv[0];
  CLI::App app{"binder transaction throughput and latency (AOSP binderThroughputTest's flags)"};
  app.set_version_flag("--version", cused::version_text("binder-throughput", nullptr));
  app.add_option("-w", settings.workers, "total number of workers")->check(CLI::PositiveNumber);
  app.add_option("-i", settings.iterations, "iterations per worker")->check(CLI::PositiveNumber);
  app.add_option("-s", settings.payload, "payload size in bytes")->check(CLI::NonNegativeNumber);
  app.add_flag("-p", settings.pairs, "split workers into client/server pairs");
  app.add_flag("-t", settings.training, "run a training round to estimate the max latency");
  app.add_option("-m", settings.max_latency_us, "expected max latency in microseconds")
      ->check(CLI::PositiveNumber);
  app.add_option("--device", settings.device, "binder device node")->capture_default_str();
  app.add_flag("--defer-complete", settings.defer_complete,
               "servers reply with TF_DEFER_COMPLETE (cused's features/defer_complete)");
  app.add_flag("--inherit-rt", settings.inherit_rt,
               "the workers' services let a real-time caller's policy through to the thread "
               "serving it (FLAT_BINDER_FLAG_INHERIT_RT; cused's priority=android, the Android "
               "kernel's binder)");
  app.add_option("--wait-for-manager", settings.wait_for_manager_seconds,
                 "seconds to wait for a context manager (servicemanager) on the device; it says "
                 "it is waiting after 0.25 s")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  if (settings.pairs && settings.workers < 2) fail("-p needs at least 2 workers");
  // A worker that dies leaves the master writing to a closed pipe: say so, not die of SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  // Before any worker is forked, so that a missing one (or a device that cannot be opened) is
  // said once, not once a worker.
  cused::client::await_context_manager(settings.device, manager_wait(settings));

  ThroughputResults results;
  if (settings.training) {
    std::printf("Start training round\n");
    if (!run_round(settings, results)) return EXIT_FAILURE;
    // The real round's histogram spans twice the training round's worst latency.
    settings.max_latency_us = std::max<std::uint64_t>(1, 2 * results.worst_ns / 1000);
    std::printf("Max latency during training: %sms\n",
                fmt::format("{:g}", static_cast<double>(results.worst_ns) / 1e6).c_str());
    std::printf("Completed training round\n\n");
  }
  if (!run_round(settings, results)) return EXIT_FAILURE;
  std::printf("%s", results.report().c_str());
  return EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}
