// SPDX-License-Identifier: GPL-2.0-only
// binder-messaging: hackbench's messaging workload over binder (issue 9). G groups; each group is
// a receiver process with R looper threads serving R objects (hackbench's receivers) and a sender
// process with S threads (hackbench's senders). Every sender sends `loops` messages of 100 bytes
// (hackbench's DATASIZE) to every receiver of its group, oneway except every `--sync-every`th,
// which is a synchronous call. The time runs from the moment all senders are released until every
// receiver has received everything; groups share nothing but the daemon, so what grows with G is
// contention on the daemon's threads and on each receiver proc's locks (inner lock, node locks,
// allocator), which is where lock_policy= acts.
//
// Objects are found through the device's context manager with Android 10's IServiceManager
// protocol: if the device has no context manager, the tool runs one for the duration (the
// service manager of tools/servicemanager, in a child process).
//
// Output: one machine-readable line per run (binder-ab: --metric 'seconds=([0-9.]+)'
// --lower-is-better), then a table of medians per group count. Several --device options (say, one
// device per lock_policy= of one cused) are run interleaved, round by round, and the table compares
// each with the first.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "client/program_errors.h"
#include "client/service_manager.h"
#include "core/version.h"
#include "tools/programs/servicemanager_registry.h"

namespace {

using namespace cused;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kMessage = 1;
constexpr std::size_t kMessageSize = 100;  // hackbench's DATASIZE

struct Settings {
  std::string device = "/dev/binder";
  std::vector<int> groups{1, 2, 4, 8, 16};
  int loops = 20;
  int senders = 4;
  int receivers = 4;
  int sync_every = 2;
  int rounds = 1;
  bool defer_complete = false;
  double timeout_seconds = 120;
};

struct RunResult {
  int groups = 0;
  double seconds = 0;
  long messages = 0;
  long failed = 0;
};

// A pipe whose ends the tool and its children pass one-byte (or one-int) reports over.
class Pipe {
 public:
  Pipe() {
    if (pipe2(fds_, O_CLOEXEC) != 0)
      throw std::system_error(errno, std::generic_category(), "pipe");
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  void close_read() { close_fd(fds_[0]); }
  void close_write() { close_fd(fds_[1]); }
  void send(std::int32_t value) const {
    if (write(fds_[1], &value, sizeof value) != sizeof value) _exit(3);
  }
  // The next value, or nullopt at EOF or when `deadline` passes.
  std::optional<std::int32_t> receive(Clock::time_point deadline) const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd fd{fds_[0], POLLIN, 0};
    if (left.count() <= 0 || poll(&fd, 1, static_cast<int>(left.count())) != 1) return {};
    std::int32_t value;
    if (read(fds_[0], &value, sizeof value) != sizeof value) return {};
    return value;
  }
  // Blocks until the write end is closed everywhere (the start signal).
  void wait_for_eof() const {
    char byte;
    while (read(fds_[0], &byte, 1) > 0) {
    }
  }

 private:
  static void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  int fds_[2] = {-1, -1};
};

pid_t spawn(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // receivers serve until killed: not past the tool
    _exit(body());
  }
  return pid;
}

void kill_and_reap(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids) kill(pid, SIGKILL);
  for (pid_t pid : pids) waitpid(pid, nullptr, 0);
}

client::ProcessOptions process_options(const Settings& settings) {
  client::ProcessOptions options;
  options.device = settings.device;
  options.max_threads = 0;  // the tool starts every looper itself: R per receiver, no more
  options.defer_complete = settings.defer_complete;
  return options;
}

// Unique per tool process (its pid, taken before any fork), run, group and receiver.
std::string receiver_name(int run, int group, int receiver) {
  static const pid_t tool = getpid();
  return fmt::format("binder-messaging.{}.{}.{}.{}", tool, run, group, receiver);
}

// The device's context manager for this tool's lifetime, unless the device has one already.
class ServiceManagerHub {
 public:
  explicit ServiceManagerHub(const Settings& settings) {
    Pipe ready;
    pid_ = spawn([&] {
      ready.close_read();
      client::BinderProcess process(process_options(settings));
      client::IpcThread thread(process);
      tools::ServiceRegistry registry(thread, false);
      int result = process.become_context_manager(
          [&registry](const client::IncomingTransaction& txn, client::Parcel& reply) {
            return registry.on_transaction(txn, reply);
          });
      process.set_death_handler(
          [&registry](binder_uintptr_t cookie) { registry.on_death(cookie); });
      ready.send(result);
      if (result != 0) return 0;
      thread.join_looper(true);
      return 1;
    });
    ready.close_write();
    auto result = ready.receive(Clock::now() + std::chrono::seconds(10));
    if (!result) throw std::runtime_error("service manager: no answer");
    if (*result == 0) {
      serving_ = true;
    } else if (*result != -EBUSY && *result != -EPERM) {
      throw std::system_error(-*result, std::generic_category(), "BINDER_SET_CONTEXT_MGR");
    }
  }
  ~ServiceManagerHub() {
    if (serving_) kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  bool serving() const { return serving_; }

 private:
  pid_t pid_ = -1;
  bool serving_ = false;
};

// A receiver process: R objects, R looper threads; reports on `done` once it has received every
// message of its group (or at once, with -1, if it could not register).
int run_receivers(const Settings& settings, int run, int group, const Pipe& ready, Pipe& start,
                  const Pipe& done) {
  start.close_write();  // or the senders would never see the start
  const long expected = static_cast<long>(settings.senders) * settings.receivers * settings.loops;
  std::atomic<long> received{0};
  client::BinderProcess process(process_options(settings));
  auto handler = [&](const client::IncomingTransaction& txn, client::Parcel&) {
    if (txn.code != kMessage || txn.data.size() != kMessageSize) return client::kUnknownTransaction;
    if (received.fetch_add(1) + 1 == expected) done.send(0);
    return client::kOk;
  };
  {
    client::IpcThread thread(process);
    client::ServiceManagerProxy sm(thread);
    for (int r = 0; r < settings.receivers; ++r) {
      if (sm.add_service(receiver_name(run, group, r), process.add_local_object(handler)) != 0) {
        ready.send(-1);
        return 1;
      }
    }
  }
  std::vector<std::thread> loopers;
  for (int r = 0; r < settings.receivers; ++r)
    loopers.emplace_back([&process] {
      client::IpcThread thread(process);
      thread.join_looper(true);
    });
  ready.send(0);
  for (auto& looper : loopers) looper.join();  // until killed
  return 0;
}

// One sender thread: `loops` rounds of one message to every receiver; returns failed sends.
long send_messages(client::BinderProcess& process, const std::vector<std::uint32_t>& handles,
                   const Settings& settings) {
  client::IpcThread thread(process);
  client::Parcel data;
  data.write_zeros(kMessageSize);
  long failed = 0, sent = 0;
  for (int i = 0; i < settings.loops; ++i) {
    for (std::uint32_t handle : handles) {
      bool sync = settings.sync_every > 0 && ++sent % settings.sync_every == 0;
      client::Parcel reply;
      if (thread.transact(handle, kMessage, data, sync ? &reply : nullptr, sync ? 0 : TF_ONE_WAY) !=
          client::kOk)
        ++failed;
    }
  }
  return failed;
}

// A sender process: finds its group's receivers, reports ready, waits for the start, sends with S
// threads and reports the number of failed sends.
int run_senders(const Settings& settings, int run, int group, const Pipe& ready, Pipe& start,
                const Pipe& done) {
  start.close_write();
  client::BinderProcess process(process_options(settings));
  std::vector<std::uint32_t> handles;
  {
    client::IpcThread thread(process);
    client::ServiceManagerProxy sm(thread);
    for (int r = 0; r < settings.receivers; ++r) {
      auto handle = sm.get_service(receiver_name(run, group, r));
      if (!handle) {
        ready.send(-1);
        return 1;
      }
      handles.push_back(*handle);
    }
  }
  ready.send(0);
  start.wait_for_eof();
  std::atomic<long> failed{0};
  std::vector<std::thread> senders;
  for (int s = 0; s < settings.senders; ++s)
    senders.emplace_back([&] { failed += send_messages(process, handles, settings); });
  for (auto& sender : senders) sender.join();
  done.send(static_cast<std::int32_t>(std::min<long>(failed.load(), INT32_MAX)));
  return 0;
}

// Waits for `count` reports on `pipe`; false (with a message) on a failure or at the deadline.
bool await(const Pipe& pipe, int count, Clock::time_point deadline, const char* what, long* sum) {
  for (int i = 0; i < count; ++i) {
    auto value = pipe.receive(deadline);
    if (!value || *value < 0) {
      fmt::print(stderr, "binder-messaging: {} {}\n", what, value ? "failed" : "timed out");
      return false;
    }
    if (sum) *sum += *value;
  }
  return true;
}

std::optional<RunResult> run_groups(const Settings& settings, int run, int groups) {
  Pipe ready, start, done;
  std::vector<pid_t> receivers, senders;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(settings.timeout_seconds));
  auto give_up = [&] {
    kill_and_reap(senders);
    kill_and_reap(receivers);
    return std::nullopt;
  };
  for (int g = 0; g < groups; ++g)
    receivers.push_back(
        spawn([&, g] { return run_receivers(settings, run, g, ready, start, done); }));
  if (!await(ready, groups, deadline, "receiver registration", nullptr)) return give_up();
  for (int g = 0; g < groups; ++g)
    senders.push_back(spawn([&, g] { return run_senders(settings, run, g, ready, start, done); }));
  if (!await(ready, groups, deadline, "sender lookup", nullptr)) return give_up();

  RunResult result;
  result.groups = groups;
  result.messages =
      static_cast<long>(groups) * settings.senders * settings.receivers * settings.loops;
  auto begin = Clock::now();
  start.close_write();  // every sender's read of `start` returns: go
  if (!await(done, 2 * groups, deadline, "run", &result.failed)) return give_up();
  result.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  for (pid_t pid : senders) waitpid(pid, nullptr, 0);
  kill_and_reap(receivers);
  return result;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// The per-run line binder-ab and scripts parse.
void print_run(const Settings& settings, const RunResult& result) {
  fmt::print(
      "binder-messaging: device={} groups={} senders={} receivers={} loops={} sync_every={} "
      "messages={} failed={} seconds={:.6f} us_per_message={:.2f}\n",
      settings.device, result.groups, settings.senders, settings.receivers, settings.loops,
      settings.sync_every, result.messages, result.failed, result.seconds,
      result.seconds * 1e6 / static_cast<double>(result.messages));
  std::fflush(stdout);
}

// Medians per group count and device; with several devices, each against the first.
void print_table(const Settings& settings, const std::vector<std::string>& devices,
                 std::map<std::pair<int, std::string>, std::vector<double>>& seconds) {
  fmt::print(
      "\n| groups | messages | device | seconds (median of {}) | seconds per group | vs {} |\n",
      settings.rounds, devices.front());
  fmt::print("|---:|---:|---|---:|---:|---:|\n");
  for (int groups : settings.groups) {
    long messages =
        static_cast<long>(groups) * settings.senders * settings.receivers * settings.loops;
    double base = median(seconds[{groups, devices.front()}]);
    for (const auto& device : devices) {
      double s = median(seconds[{groups, device}]);
      fmt::print("| {} | {} | {} | {:.4f} | {:.4f} | {:+.1f}% |\n", groups, messages, device, s,
                 s / groups, (s / base - 1) * 100);
    }
  }
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  Settings settings;
  std::vector<std::string> devices{settings.device};
  CLI::App app{
      "binder-messaging: hackbench's messaging workload over binder (groups of senders "
      "and receivers exchanging oneway and sync transactions)"};
  app.set_version_flag("--version", cused::version_text("binder-messaging", nullptr));
  app.add_option("-d,--device", devices,
                 "binder device node; several: runs interleaved, compared with the first")
      ->capture_default_str();
  app.add_option("-g,--groups", settings.groups, "group counts to run, e.g. -g 1,2,4,8,16")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("-l,--loops", settings.loops, "messages per sender per receiver")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("-s,--senders", settings.senders, "sender threads per group (hackbench: 20)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("-r,--receivers", settings.receivers,
                 "receiver objects and looper threads per group (hackbench: 20)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--sync-every", settings.sync_every,
                 "every Nth message is a synchronous call, the others oneway (0: all oneway)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--rounds", settings.rounds, "repeat the group counts, interleaved")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--defer-complete", settings.defer_complete,
               "receivers reply with TF_DEFER_COMPLETE");
  app.add_option("--timeout", settings.timeout_seconds, "seconds before a run is abandoned")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  signal(SIGPIPE, SIG_IGN);

  try {
    receiver_name(0, 0, 0);  // fixes the tool's pid in the names before the first fork
    std::vector<std::unique_ptr<ServiceManagerHub>> hubs;
    std::vector<Settings> per_device;
    for (const auto& device : devices) {
      per_device.push_back(settings);
      per_device.back().device = device;
      hubs.push_back(std::make_unique<ServiceManagerHub>(per_device.back()));
    }
    std::map<std::pair<int, std::string>, std::vector<double>> seconds;
    int run = 0;
    for (int round = 0; round < settings.rounds; ++round) {
      for (int groups : settings.groups) {
        for (const Settings& one : per_device) {
          auto result = run_groups(one, run++, groups);
          if (!result) return 1;
          seconds[{groups, one.device}].push_back(result->seconds);
          print_run(one, *result);
          if (result->failed > 0) return 1;
        }
      }
    }
    print_table(settings, devices, seconds);
    return 0;
  } catch (const std::exception& error) {
    fmt::print(stderr, "binder-messaging: {}\n", error.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}
