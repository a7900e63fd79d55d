// SPDX-License-Identifier: GPL-2.0-only
// bench-transport: what one ioctl costs through cused, against the floors it cannot beat, in
// one run (docs/design.md section 8):
//   pipe      a one-byte ping-pong between two processes (the scheduler's wake-up floor);
//   bare      a libfuse server that answers every ioctl at once (the FUSE floor);
//   cused     BINDER_VERSION on a cused binder node (the daemon's own transport cost);
//   remote    one process_vm_readv/writev of another process; the daemon's own count of them per
//             deferred call (this process is the daemon) says how many a call pays;
//   call      one synchronous binder call through cused, client process to a server process
//             (the context manager, libcused-client's looper), with the server replying in the
//             legacy flow (3 ioctls per call) and with TF_DEFER_COMPLETE (2 ioctls per call);
//   run       the same ioctl and calls with every process under `cused run` (seccomp user
//             notifications, docs/run.md), and their floor: a notified ioctl answered at once.
// A call crosses the daemon twice on its critical path (the caller's ioctl, the server's reply
// ioctl), so its floor is two bare FUSE round trips (issue 4's target: within 1.3x of that).
// FUSE modes: classic /dev/fuse reads, and io_uring when the kernel allows it. Rounds are
// interleaved (pipe, bare, cused, legacy call, deferred call, pipe, ...) so that machine noise
// hits all alike; the table shows per-round medians and the ratios.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/binder_device.h"
#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "core/driver.h"
#include "cused/binderfs/filesystem.h"
#include "cused/binderfs/mount.h"
#include "cused/fuse/fuse.h"
#include "cused/host/process_vm.h"
#include "cused/host/thread_timer.h"
#include "cused/run/attach.h"
#include "cused/run/listener.h"
#include "cused/run/run_server.h"
#include "cused/run/seccomp_filter.h"
#include "tests/bench/bench_variant.h"

namespace {

// Calls made before the timed ones, discarded: first-use page faults and cold caches.
constexpr int warm_up_calls(int iterations) { return iterations / 10; }

using Clock = std::chrono::steady_clock;

// ---- the bare libfuse server: one file, every ioctl answered at once ------------------------
constexpr fuse_ino_t kFileIno = 2;

void bare_lookup(fuse_req_t req, fuse_ino_t, const char* name) {
  if (std::strcmp(name, "file") != 0) return static_cast<void>(fuse_reply_err(req, ENOENT));
  fuse_entry_param entry{};
  entry.ino = kFileIno;
  entry.attr.st_ino = kFileIno;
  entry.attr.st_mode = S_IFREG | 0600;
  entry.attr.st_nlink = 1;
  fuse_reply_entry(req, &entry);
}
void bare_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  struct stat st {};
  st.st_ino = ino;
  st.st_mode = ino == kFileIno ? S_IFREG | 0600 : S_IFDIR | 0755;
  st.st_nlink = 1;
  fuse_reply_attr(req, &st, 3600);
}
void bare_open(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) { fuse_reply_open(req, fi); }
void bare_ioctl(fuse_req_t req, fuse_ino_t, unsigned, void*, fuse_file_info*, unsigned, const void*,
                std::size_t, std::size_t out_size) {
  static const char zeros[64] = {};
  fuse_reply_ioctl(req, 0, zeros, std::min(out_size, sizeof zeros));
}

fuse_lowlevel_ops bare_operations() {
  fuse_lowlevel_ops ops{};
  ops.lookup = bare_lookup;
  ops.getattr = bare_getattr;
  ops.open = bare_open;
  ops.ioctl = bare_ioctl;
  return ops;
}

// A bare server mounted on its own directory, served on a background thread.
class BareServer {
 public:
  BareServer(const std::string& dir, bool io_uring) : dir_(dir) {
    std::vector<std::string> words{"bare", "-o", "default_permissions"};
    if (io_uring) words.insert(words.end(), {"-o", "io_uring,io_uring_q_depth=512"});
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
    static const fuse_lowlevel_ops ops = bare_operations();
    session_ = fuse_session_new(&args, &ops, sizeof ops, nullptr);
    fuse_opt_free_args(&args);
    if (!session_ || fuse_session_mount(session_, dir.c_str()) != 0)
      throw std::runtime_error("bare FUSE server: cannot mount");
    thread_ = std::thread([this] {
      fuse_loop_config* config = fuse_loop_cfg_create();
      fuse_session_loop_mt(session_, config);
      fuse_loop_cfg_destroy(config);
    });
  }
  ~BareServer() {
    fuse_session_exit(session_);
    fuse_session_unmount(session_);
    thread_.join();
    fuse_session_destroy(session_);
  }

 private:
  std::string dir_;
  fuse_session* session_ = nullptr;
  std::thread thread_;
};

// ---- measurements: each runs `iterations` round trips in a child process --------------------

// In a child forked from this process, which is also the FUSE daemon: keeps only `fd` (as fd 3)
// and closes the daemon's /dev/fuse and io_uring descriptors. A child stuck on the mount that
// held them would keep the connection alive (the kernel aborts it when the last /dev/fuse file
// goes), so killing a hung benchmark would leave its children in D state.
int keep_only(int fd) {
  if (dup2(fd, 3) != 3) _exit(1);
  syscall(SYS_close_range, 4U, ~0U, 0U);
  return 3;
}

// Runs `loop` in a forked child (a separate process, as a real client is) and returns the mean
// microseconds per round trip it reports.
double in_child(const std::function<double()>& loop) {
  int report[2];
  if (pipe(report) != 0) throw std::runtime_error("pipe");
  pid_t child = fork();
  if (child == 0) {
    int out = keep_only(report[1]);
    double us = loop();
    [[maybe_unused]] auto n = write(out, &us, sizeof us);
    _exit(0);
  }
  close(report[1]);
  double us = -1;
  if (read(report[0], &us, sizeof us) != sizeof us) us = -1;
  close(report[0]);
  waitpid(child, nullptr, 0);
  return us;
}

// Puts the calling child under the `cused run` daemon serving `mount`, when it is not empty.
bool serve_me_by(const std::string& mount) {
  return mount.empty() || cused::run::serve_me_by(mount) == 0;
}

double ioctl_round_trips(const std::string& path, unsigned long request, int iterations,
                         const std::string& run_mount = {}) {
  return in_child([&] {
    if (!serve_me_by(run_mount)) return -1.0;
    cused::client::BinderDevice device(path);
    binder_version version{};
    for (int i = 0; i < warm_up_calls(iterations); ++i) device.ioctl(request, &version);
    auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) device.ioctl(request, &version);
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations;
  });
}

// One access to another process's memory, as the daemon makes four per deferred call (a read
// of each side's commands, the client's payload riding along, and a write of each side's BR_
// stream): a process_vm_readv and a process_vm_writev of 64 bytes, from a child into this
// process, averaged. Part of the floor no FUSE daemon can go below, measured in the same run.
double remote_accesses(int iterations) {
  static std::array<std::byte, 64> target{};
  const pid_t parent = getpid();
  return in_child([&] {
    std::array<std::byte, 64> local{};
    auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      if (cused::host::process_vm_read(parent, reinterpret_cast<std::uint64_t>(target.data()),
                                       local.data(), local.size()) != 0 ||
          cused::host::process_vm_write(parent, reinterpret_cast<std::uint64_t>(target.data()),
                                        local.data(), local.size()) != 0)
        return -1.0;
    }
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
           (2.0 * iterations);
  });
}

// The floor of a `cused run` ioctl: a notified ioctl whose answer comes at once from another
// process (as from the daemon), with nothing copied.
double notify_round_trips(int iterations) {
  return in_child([&] {
    int listener_fd = cused::run::install_binder_ioctl_filter();
    if (listener_fd < 0) return -1.0;
    pid_t answerer = fork();
    if (answerer == 0) {
      // Stops after the ioctl whose argument is NULL: the measured loop's last word.
      cused::run::Listener listener(listener_fd);
      listener.wake_synchronously();  // as the daemon does
      while (auto notification = listener.receive()) {
        listener.answer(notification->id, 0);
        if (notification->data.args[2] == 0) break;
      }
      _exit(0);
    }
    close(listener_fd);
    binder_version version{};
    for (int i = 0; i < warm_up_calls(iterations); ++i) ioctl(-1, BINDER_VERSION, &version);
    auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) ioctl(-1, BINDER_VERSION, &version);
    double us =
        std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations;
    ioctl(-1, BINDER_VERSION, nullptr);
    waitpid(answerer, nullptr, 0);
    return us;
  });
}

double pipe_round_trips(int iterations) {
  return in_child([&] {
    int ping[2], pong[2];
    if (pipe(ping) != 0 || pipe(pong) != 0) return -1.0;
    pid_t echo = fork();
    if (echo == 0) {
      close(ping[1]);  // so that the parent's close ends this loop
      char byte;
      while (read(ping[0], &byte, 1) == 1)
        if (write(pong[1], &byte, 1) != 1) break;
      _exit(0);
    }
    char byte = 0;
    auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1) return -1.0;
    }
    double us =
        std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations;
    close(ping[1]);
    waitpid(echo, nullptr, 0);
    return us;
  });
}

// The context manager of `device`, in a child process, answering every call with an empty reply
// (with TF_DEFER_COMPLETE when `defer`). Serves until destroyed.
class CallServer {
 public:
  CallServer(const std::string& device, bool defer, const std::string& run_mount = {}) {
    int ready[2];
    if (pipe(ready) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // it serves until killed: not past the benchmark
      int out = keep_only(ready[1]);
      if (!serve_me_by(run_mount)) _exit(1);
      cused::client::ProcessOptions options;
      options.device = device;
      options.max_threads = 0;  // one looper: the call's critical path, nothing else
      options.defer_complete = defer;
      cused::client::BinderProcess process(options);
      int result =
          process.become_context_manager([](const cused::client::IncomingTransaction&,
                                            cused::client::Parcel&) { return cused::client::kOk; });
      [[maybe_unused]] auto n = write(out, &result, sizeof result);
      if (result != 0) _exit(1);
      cused::client::IpcThread thread(process);
      thread.join_looper(true);
      _exit(0);
    }
    close(ready[1]);
    int result = -1;
    bool ok = read(ready[0], &result, sizeof result) == sizeof result && result == 0;
    close(ready[0]);
    if (!ok) throw std::runtime_error("call server: cannot become the context manager");
  }
  ~CallServer() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  CallServer(const CallServer&) = delete;
  CallServer& operator=(const CallServer&) = delete;

 private:
  pid_t pid_ = -1;
};

// Synchronous calls to handle 0 of `device` with a 4-byte payload; the reply buffer is freed with
// the next call's ioctl, as libbinder does.
double call_round_trips(const std::string& device, int iterations,
                        const std::string& run_mount = {}) {
  return in_child([&] {
    if (!serve_me_by(run_mount)) return -1.0;
    cused::client::ProcessOptions options;
    options.device = device;
    options.max_threads = 0;
    cused::client::BinderProcess process(options);
    cused::client::IpcThread thread(process);
    cused::client::Parcel data;
    data.write_int32(42);
    auto call = [&] {
      cused::client::Parcel reply;
      return thread.transact(0, 1, data, &reply) == cused::client::kOk;
    };
    for (int i = 0; i < warm_up_calls(iterations); ++i)
      if (!call()) return -1.0;
    auto start = Clock::now();
    for (int i = 0; i < iterations; ++i)
      if (!call()) return -1.0;
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations;
  });
}

// One loop's rounds. A round that failed (its child reported -1 or died) is left out of the median
// and counted: a failing path must show as failures, never as a fast median.
struct Rounds {
  std::vector<double> us;
  int failed = 0;

  void add(double round_us) {
    if (round_us < 0)
      ++failed;
    else
      us.push_back(round_us);
  }
  // 0 for a loop that did not run (--only), NaN when every round failed.
  double median() const {
    if (us.empty()) return failed > 0 ? std::numeric_limits<double>::quiet_NaN() : 0;
    std::vector<double> sorted = us;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }
};

bool uring_available() {
  std::ifstream parameter("/sys/module/fuse/parameters/enable_uring");
  char value = 'N';
  parameter >> value;
  return value == 'Y';
}

std::string make_dir(const std::string& prefix) {
  std::string pattern = "/tmp/" + prefix + "XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
  return pattern;
}

struct ModeResult {
  std::string mode;
  double pipe_us, bare_us, cused_us, legacy_call_us, defer_call_us, remote_us;
  // Remote accesses the daemon made per deferred call on this transport (counted, median).
  double remote_per_call = 0;
  // "loop N" for each loop with failed rounds, left out of its median.
  std::vector<std::string> failed_rounds;
  // What no daemon reaching its callers through the kernel can go below: two round trips of the
  // transport (FUSE, or seccomp notification) and the accesses to the callers' memory.
  double floor_us() const { return 2 * bare_us + remote_per_call * remote_us; }
};

// Deferred calls through `device`, with the process_vm_* calls the daemon (this process) made
// meanwhile counted per call: what the call's floor charges. The warm-up calls are counted too,
// and the few setup ioctls of the client (open, mmap, version) vanish in the average.
double counted_call_round_trips(const std::string& device, int iterations, Rounds& accesses,
                                const std::string& run_mount = {}) {
  std::uint64_t before = cused::host::remote_accesses();
  double us = call_round_trips(device, iterations, run_mount);
  if (us >= 0)
    accesses.add(static_cast<double>(cused::host::remote_accesses() - before) /
                 (iterations + warm_up_calls(iterations)));
  return us;
}

// Which loops run: all of them, or one named by --only (for profiling a single path).
struct Selection {
  std::string only;
  bool runs(const char* loop) const { return only.empty() || only == loop; }
};

// The classic mode's mount also serves `cused run` (`run`), in the same interleaved rounds.
std::vector<ModeResult> measure_mode(bool io_uring, int rounds, int iterations,
                                     const Selection& selection) {
  std::string bare_dir = make_dir("bench-bare-"), cused_dir = make_dir("bench-cused-");
  Rounds pipe_us, bare_us, cused_us, legacy_us, defer_us, remote_us, defer_accesses;
  Rounds notify_us, run_us, run_legacy_us, run_defer_us, run_defer_accesses;
  const bool with_run = !io_uring;
  {
    BareServer bare(bare_dir, io_uring);
    cused::binderfs::FilesystemOptions fs_options;
    fs_options.devices = {"binder", "hwbinder", "vndbinder", "run-hwbinder", "run-vndbinder"};
    // The process's timer on the default Driver, as the daemon's main() gives it.
    cused::core::Driver::shared_default()->set_timer(cused::host::ThreadTimer::shared());
    cused::devices::RegistryOptions registry_options;
    registry_options.default_variant = cused::bench::bench_variant();
    cused::devices::DeviceRegistry registry(registry_options);
    cused::binderfs::Filesystem filesystem(registry, fs_options);
    cused::binderfs::MountOptions options;
    options.mountpoint = cused_dir;
    options.io_uring = io_uring;
    cused::binderfs::Mount mount(filesystem, options);
    std::optional<cused::run::RunServer> run_server;
    if (with_run) run_server.emplace(registry, filesystem.mount_device());
    mount.serve_in_background();
    // One device per reply flow and transport, each with its own context manager.
    CallServer legacy_server(cused_dir + "/hwbinder", false);
    CallServer defer_server(cused_dir + "/vndbinder", true);
    std::optional<CallServer> run_legacy_server, run_defer_server;
    if (with_run) {
      run_legacy_server.emplace(cused_dir + "/run-hwbinder", false, cused_dir);
      run_defer_server.emplace(cused_dir + "/run-vndbinder", true, cused_dir);
    }
    for (int round = 0; round < rounds; ++round) {
      if (selection.runs("pipe")) pipe_us.add(pipe_round_trips(iterations));
      if (selection.runs("bare"))
        bare_us.add(ioctl_round_trips(bare_dir + "/file", BINDER_VERSION, iterations));
      if (selection.runs("cused"))
        cused_us.add(ioctl_round_trips(cused_dir + "/binder", BINDER_VERSION, iterations));
      if (selection.runs("legacy"))
        legacy_us.add(call_round_trips(cused_dir + "/hwbinder", iterations));
      if (selection.runs("defer"))
        defer_us.add(
            counted_call_round_trips(cused_dir + "/vndbinder", iterations, defer_accesses));
      if (selection.runs("remote")) remote_us.add(remote_accesses(iterations));
      if (!with_run) continue;
      if (selection.runs("notify")) notify_us.add(notify_round_trips(iterations));
      if (selection.runs("run"))
        run_us.add(ioctl_round_trips(cused_dir + "/binder", BINDER_VERSION, iterations, cused_dir));
      if (selection.runs("run-legacy"))
        run_legacy_us.add(call_round_trips(cused_dir + "/run-hwbinder", iterations, cused_dir));
      if (selection.runs("run-defer"))
        run_defer_us.add(counted_call_round_trips(cused_dir + "/run-vndbinder", iterations,
                                                  run_defer_accesses, cused_dir));
    }
  }
  rmdir(bare_dir.c_str());
  rmdir(cused_dir.c_str());
  auto failures = [](std::initializer_list<std::pair<const char*, const Rounds*>> loops) {
    std::vector<std::string> named;
    for (auto [name, loop] : loops)
      if (loop->failed > 0) named.push_back(fmt::format("{} {}", name, loop->failed));
    return named;
  };
  std::vector<ModeResult> results{{io_uring ? "io_uring" : "classic", pipe_us.median(),
                                   bare_us.median(), cused_us.median(), legacy_us.median(),
                                   defer_us.median(), remote_us.median(), defer_accesses.median(),
                                   failures({{"pipe", &pipe_us},
                                             {"bare", &bare_us},
                                             {"cused", &cused_us},
                                             {"legacy", &legacy_us},
                                             {"defer", &defer_us},
                                             {"remote", &remote_us}})}};
  if (with_run)
    results.push_back({"run", pipe_us.median(), notify_us.median(), run_us.median(),
                       run_legacy_us.median(), run_defer_us.median(), remote_us.median(),
                       run_defer_accesses.median(),
                       failures({{"notify", &notify_us},
                                 {"run", &run_us},
                                 {"run-legacy", &run_legacy_us},
                                 {"run-defer", &run_defer_us}})});
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench-transport: cused's empty-ioctl round trip against bare libfuse and a pipe"};
  int rounds = 9, iterations = 20000;
  bool skip_uring = false;
  Selection selection;
  app.add_option("-r,--rounds", rounds, "Interleaved rounds (median is reported)");
  app.add_option("-i,--iterations", iterations, "Round trips per round");
  app.add_flag("--no-io-uring", skip_uring, "Measure the classic /dev/fuse mode only");
  app.add_option("--only", selection.only, "Run one loop only, to profile it")
      ->check(CLI::IsMember({"pipe", "bare", "cused", "legacy", "defer", "remote", "notify", "run",
                             "run-legacy", "run-defer"}));
  CLI11_PARSE(app, argc, argv);
  signal(SIGPIPE, SIG_IGN);

  std::vector<ModeResult> results = measure_mode(false, rounds, iterations, selection);
  if (!skip_uring) {
    if (uring_available()) {
      auto uring = measure_mode(true, rounds, iterations, selection);
      results.insert(results.end(), uring.begin(), uring.end());
    } else
      fmt::print("io_uring: skipped (/sys/module/fuse/parameters/enable_uring is not Y)\n");
  }
  fmt::print(
      "\n| mode | pipe ping-pong µs | bare libfuse ioctl µs | cused ioctl µs | cused/bare "
      "| call legacy µs | call defer µs | legacy/(2 bare) | defer/(2 bare) | defer/pipe "
      "| remote access µs | remote accesses/call | floor µs | defer/floor |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : results)
    fmt::print(
        "| {} | {:.1f} | {:.1f} | {:.1f} | {:.2f} | {:.1f} | {:.1f} | {:.2f} | {:.2f} | {:.2f} "
        "| {:.2f} | {:.2f} | {:.1f} | {:.2f} |\n",
        r.mode, r.pipe_us, r.bare_us, r.cused_us, r.cused_us / r.bare_us, r.legacy_call_us,
        r.defer_call_us, r.legacy_call_us / (2 * r.bare_us), r.defer_call_us / (2 * r.bare_us),
        r.defer_call_us / r.pipe_us, r.remote_us, r.remote_per_call, r.floor_us(),
        r.defer_call_us / r.floor_us());
  fmt::print(
      "\nmedians of {} interleaved rounds x {} round trips; targets: cused/bare <= 1.30, "
      "call/(2 bare) <= 1.30; floor = 2 bare + the remote accesses the daemon counted per "
      "deferred call (median)\n"
      "mode run: `bare` is a notified ioctl answered at once, its floor 2 of those + its remote "
      "accesses\n",
      rounds, iterations);
  for (const auto& r : results)
    fmt::print(
        "failed rounds, left out of the medians ({}): {}\n", r.mode,
        r.failed_rounds.empty() ? "none" : fmt::format("{}", fmt::join(r.failed_rounds, ", ")));
  auto classic = std::find_if(results.begin(), results.end(),
                              [](const ModeResult& r) { return r.mode == "classic"; });
  auto run = std::find_if(results.begin(), results.end(),
                          [](const ModeResult& r) { return r.mode == "run"; });
  if (classic != results.end() && run != results.end())
    fmt::print(
        "run/classic: ioctl {:.2f}, legacy call {:.2f}, deferred call {:.2f} (target: deferred "
        "call <= 0.60); deferred call / its floor {:.2f} (target <= 1.30)\n",
        run->cused_us / classic->cused_us, run->legacy_call_us / classic->legacy_call_us,
        run->defer_call_us / classic->defer_call_us, run->defer_call_us / run->floor_us());
  return 0;
}
