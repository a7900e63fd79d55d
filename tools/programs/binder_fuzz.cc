// SPDX-License-Identifier: GPL-2.0-only
// binder-fuzz (issue 8): many processes and threads issue random but structurally plausible
// ioctl sequences at a binder device (a running cused, or the kernel's), kill themselves at
// random points, and the parent checks that the device still answers and that
// binder_logs/state holds no proc of ours once they are gone. Every round has its own seed; a
// failure prints the command that replays that round.
//
//   binder-fuzz --dev DIR/binder [--seed N] [--duration S] [--procs N] [--threads N]
#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/binder_device.h"
#include "client/program_errors.h"
#include "client/return_stream.h"
#include "core/version.h"
#include "uapi/binder.h"

namespace {

using cused::client::BinderDevice;
using Clock = std::chrono::steady_clock;

// Child exit codes the parent reports.
constexpr int kChildOk = 0;
constexpr int kChildDaemonGone = 3;  // the device stopped answering (ENOTCONN, EIO, ...)
constexpr int kChildBadAnswer = 4;   // an answer no binder driver gives

struct Options {
  std::string dev;
  std::uint64_t seed = 0;
  double duration = 10;
  int rounds = 0;  // 0: as many as fit in the duration
  int procs = 4;
  int threads = 3;
  int steps = 200;  // per thread
  std::string state;
  pid_t daemon_pid = 0;  // 0: no footprint check
};

// The errnos a binder driver answers with; anything else means the transport broke.
bool binder_errno(int err) {
  switch (err) {
    case 0:
    case EINVAL:
    case EFAULT:
    case EAGAIN:
    case EINTR:
    case EBUSY:
    case EPERM:
    case ENOENT:
    case ENOMEM:
    case ENOSPC:
    case ESRCH:
    case ENOTTY:
      return true;
    default:
      return false;
  }
}

void on_signal(int) {}

// Answers counted across the processes of a round (shared memory, so a SIGKILLed child's
// counts survive it): [0] successes, [e] errno e.
constexpr int kMaxErrno = 64;
struct Tally {
  std::atomic<long> answers[kMaxErrno];
  void count(int ret) { answers[ret >= 0 ? 0 : std::min(-ret, kMaxErrno - 1)]++; }
  std::string summary() const {
    long total = 0;
    std::string errors;
    for (int e = 0; e < kMaxErrno; e++) {
      long n = answers[e].load();
      total += n;
      if (e && n) errors += fmt::format(" {} {}", strerrorname_np(e) ? strerrorname_np(e) : "?", n);
    }
    return fmt::format("{} ioctls, {} ok{}", total, answers[0].load(), errors);
  }
};
Tally* tally = nullptr;  // SIGUSR1 interrupts a blocked ioctl (S1.12): EINTR, nothing else

// One process of a round: its device, its threads' random streams.
class FuzzProcess {
 public:
  FuzzProcess(const Options& options, std::uint64_t seed, bool manager)
      : options_(options), seed_(seed), manager_(manager) {}

  int run() {
    std::mt19937_64 rng(seed_);
    int flags = O_RDWR | O_CLOEXEC | (rng() % 4 ? O_NONBLOCK : 0);
    std::optional<BinderDevice> device;
    try {
      device.emplace(options_.dev, flags);
    } catch (const std::exception&) {
      return kChildDaemonGone;
    }
    device_ = &*device;
    if (rng() % 8) device->map(rng() % 4 ? BinderDevice::kDefaultMapSize : 4096 * (1 + rng() % 4));
    if (manager_) device->ioctl(BINDER_SET_CONTEXT_MGR, &zero_);
    // Some processes die mid-stream, at a random step of a random thread (SIGKILL).
    kill_at_ = rng() % 3 == 0 ? static_cast<int>(rng() % (options_.steps * options_.threads)) : -1;
    std::vector<std::thread> threads;
    std::atomic<bool> done{false};
    std::vector<std::atomic<std::int64_t>> busy_since(options_.threads);
    std::vector<pthread_t> handles(options_.threads);
    for (int t = 0; t < options_.threads; t++) {
      threads.emplace_back([&, t] {
        handles[t] = pthread_self();
        thread_main(seed_ * 31 + t, busy_since[t]);
      });
    }
    // Blocked reads are interrupted after a while, as a signal would (S1.12).
    std::thread watchdog([&] {
      while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        auto now = Clock::now().time_since_epoch().count();
        for (int t = 0; t < options_.threads; t++) {
          auto since = busy_since[t].load();
          if (since && now - since > 50'000'000) pthread_kill(handles[t], SIGUSR1);
        }
      }
    });
    for (auto& thread : threads) thread.join();
    done = true;
    watchdog.join();
    if (rng() % 4 == 0 && device->mapping())  // S11.9: unmap while peers may still send
      munmap(const_cast<std::byte*>(device->mapping()), device->mapping_size());
    return status_.load();
  }

 private:
  struct ThreadState {
    explicit ThreadState(std::uint64_t seed) : rng(seed) {}
    std::mt19937_64 rng;
    cused::client::FollowUps owed;
    std::vector<std::uint8_t> write;
    std::vector<std::uint64_t> scratch = std::vector<std::uint64_t>(64);
    std::deque<std::vector<std::uint8_t>> keep;  // parcels the write stream points at
  };

  template <typename T>
  static void put(std::vector<std::uint8_t>& out, const T& value) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
    out.insert(out.end(), p, p + sizeof value);
  }

  // A parcel with a few objects: local binders, handles, a PTR to our memory, sometimes an
  // offset that points at plain data (S5.1: the driver must refuse it).
  binder_transaction_data parcel(ThreadState& s) {
    auto& data = s.keep.emplace_back();
    auto& offsets_bytes = s.keep.emplace_back();
    std::vector<binder_size_t> offsets;
    put(data, std::uint64_t{s.rng()});
    int objects = s.rng() % 4;
    for (int i = 0; i < objects; i++) {
      offsets.push_back(data.size());
      switch (s.rng() % 5) {
        case 0: {
          flat_binder_object obj{};
          obj.hdr.type = s.rng() % 2 ? BINDER_TYPE_BINDER : BINDER_TYPE_WEAK_BINDER;
          obj.binder = 0x1000 * (1 + s.rng() % 4);
          obj.cookie = obj.binder + 1;
          put(data, obj);
          break;
        }
        case 1: {
          flat_binder_object obj{};
          obj.hdr.type = s.rng() % 2 ? BINDER_TYPE_HANDLE : BINDER_TYPE_WEAK_HANDLE;
          obj.handle = s.rng() % 5;
          put(data, obj);
          break;
        }
        case 2: {
          binder_buffer_object obj{};
          obj.hdr.type = BINDER_TYPE_PTR;
          obj.buffer = reinterpret_cast<binder_uintptr_t>(s.scratch.data());
          obj.length = 8 * (s.rng() % 64);
          put(data, obj);
          break;
        }
        case 3:
          put(data, std::uint64_t{s.rng()});
          offsets.back() = s.rng() % (data.size() + 8);
          break;
        default:
          offsets.pop_back();
          put(data, std::uint32_t(s.rng()));
          break;
      }
    }
    for (binder_size_t offset : offsets) put(offsets_bytes, offset);
    binder_transaction_data tr{};
    tr.code = s.rng() % 8;
    tr.data_size = data.size();
    tr.offsets_size = offsets_bytes.size();
    tr.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(data.data());
    tr.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(offsets_bytes.data());
    return tr;
  }

  void command(ThreadState& s) {
    auto& w = s.write;
    std::uint64_t dice = s.rng() % 100;
    if (s.owed.serving && dice < 50) {
      put(w, BC_REPLY);
      put(w, parcel(s));
      s.owed.serving = false;
    } else if (dice < 40) {
      binder_transaction_data tr = parcel(s);
      tr.target.handle = s.rng() % 4 ? 0 : s.rng() % 5;
      tr.flags = s.rng() % 2 ? TF_ONE_WAY : 0;
      put(w, BC_TRANSACTION);
      put(w, tr);
    } else if (dice < 55) {
      put(w, BC_FREE_BUFFER);
      if (!s.owed.buffers.empty() && s.rng() % 8) {
        put(w, s.owed.buffers.back());
        s.owed.buffers.pop_back();
      } else {
        put(w, binder_uintptr_t{s.rng()});
      }
    } else if (dice < 65) {
      put(w, static_cast<std::uint32_t>(BC_INCREFS + s.rng() % 4));
      put(w, static_cast<std::uint32_t>(s.rng() % 5));
    } else if (dice < 72) {
      auto& pending = s.rng() % 2 ? s.owed.increfs : s.owed.acquires;
      put(w, &pending == &s.owed.increfs ? BC_INCREFS_DONE : BC_ACQUIRE_DONE);
      binder_ptr_cookie pc{};
      if (!pending.empty()) {
        pc = pending.front();
        pending.pop_front();
      }
      put(w, pc);
    } else if (dice < 80) {
      put(w, s.rng() % 2 ? BC_REQUEST_DEATH_NOTIFICATION : BC_CLEAR_DEATH_NOTIFICATION);
      put(w, binder_handle_cookie{static_cast<std::uint32_t>(s.rng() % 5), s.rng() % 3});
    } else if (dice < 85) {
      put(w, BC_DEAD_BINDER_DONE);
      binder_uintptr_t cookie = s.rng() % 3;
      if (!s.owed.deaths.empty()) {
        cookie = s.owed.deaths.front();
        s.owed.deaths.pop_front();
      }
      put(w, cookie);
    } else if (dice < 92) {
      put(w, static_cast<std::uint32_t>(BC_REGISTER_LOOPER + s.rng() % 3));
    } else {
      put(w, static_cast<std::uint32_t>(s.rng()));  // not a command: EINVAL
    }
  }

  void parse(ThreadState& s, const std::vector<std::uint8_t>& read, binder_size_t consumed) {
    auto stream = std::as_bytes(std::span(read.data(), consumed));
    if (!cused::client::for_each_return(
            stream, [&](const cused::client::ReturnItem& item) { s.owed.record(item); }))
      bad_answer("a BR item cut short");
  }

  void bad_answer(const std::string& what) {
    std::fprintf(stderr, "binder-fuzz: pid %d: %s\n", getpid(), what.c_str());
    status_ = kChildBadAnswer;
  }

  // An ioctl answer: an errno binder never gives means the daemon or transport is gone.
  void check(int ret, const char* what) {
    tally->count(ret);
    if (ret >= 0 || binder_errno(-ret)) return;
    std::fprintf(stderr, "binder-fuzz: pid %d: %s: %s\n", getpid(), what, std::strerror(-ret));
    status_ = kChildDaemonGone;
  }

  void maybe_die() {
    if (step_.fetch_add(1) == kill_at_) kill(getpid(), SIGKILL);
  }

  void thread_main(std::uint64_t seed, std::atomic<std::int64_t>& busy_since) {
    ThreadState s(seed);
    for (int step = 0; step < options_.steps && status_ == kChildOk; step++) {
      maybe_die();
      s.write.clear();
      s.keep.clear();
      std::uint64_t dice = s.rng() % 100;
      if (dice < 4) {
        check(device_->ioctl(BINDER_THREAD_EXIT, &zero_), "BINDER_THREAD_EXIT");
        s.owed.serving = false;
        continue;
      }
      if (dice < 8) {
        std::uint32_t max = s.rng() % 4;
        check(device_->ioctl(BINDER_SET_MAX_THREADS, &max), "BINDER_SET_MAX_THREADS");
        continue;
      }
      if (dice < 10) {
        binder_extended_error ee{};
        check(device_->ioctl(BINDER_GET_EXTENDED_ERROR, &ee), "BINDER_GET_EXTENDED_ERROR");
        continue;
      }
      int commands = dice < 30 ? 0 : 1 + s.rng() % 3;
      for (int i = 0; i < commands; i++) command(s);
      std::vector<std::uint8_t> read(s.rng() % 4 ? 256 : 16 + s.rng() % 32);
      binder_write_read bwr{};
      bwr.write_size = s.write.size();
      bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(s.write.data());
      bwr.read_size = s.rng() % 8 ? read.size() : 0;
      bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(read.data());
      busy_since = Clock::now().time_since_epoch().count();
      int ret = device_->write_read(bwr);
      busy_since = 0;
      check(ret, "BINDER_WRITE_READ");
      if (bwr.read_consumed > bwr.read_size) bad_answer("read_consumed beyond read_size");
      parse(s, read, std::min<binder_size_t>(bwr.read_consumed, read.size()));
      ioctls_++;
    }
  }

  const Options& options_;
  const std::uint64_t seed_;
  const bool manager_;
  BinderDevice* device_ = nullptr;
  std::int32_t zero_ = 0;
  int kill_at_ = -1;
  std::atomic<int> step_{0};
  std::atomic<int> status_{kChildOk};
  std::atomic<long> ioctls_{0};
};

// "proc PID" lines of binder_logs/state (the kernel's format); nullopt when there is no file.
std::optional<std::set<pid_t>> state_procs(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::set<pid_t> procs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("proc ", 0) == 0) procs.insert(std::atoi(line.c_str() + 5));
  }
  return procs;
}

// The device answers a new opener (the daemon is alive).
bool device_alive(const std::string& dev) {
  try {
    BinderDevice device(dev);
    return device.version() == BINDER_CURRENT_PROTOCOL_VERSION;
  } catch (const std::exception&) {
    return false;
  }
}

// What the daemon holds, from /proc/PID: its open fds (each client's buffer memfd among them) and
// its resident shared (memfd) and anonymous memory.
struct Footprint {
  long fds = 0, shmem_kb = 0, anon_kb = 0;
};

std::optional<Footprint> footprint(pid_t pid) {
  Footprint now;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error))
    now.fds++;
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  if (error || !status) return std::nullopt;
  std::string name;
  long kb = 0;
  while (status >> name) {
    if (name == "RssShmem:" && status >> kb) now.shmem_kb = kb;
    if (name == "RssAnon:" && status >> kb) now.anon_kb = kb;
    status.ignore(4096, '\n');
  }
  return now;
}

// Waits (bounded) until the daemon holds no more fds and memfd pages than at `baseline`; returns
// what it holds then (nullopt: the daemon is gone).
std::optional<Footprint> settled_footprint(pid_t pid, const Footprint& baseline) {
  std::optional<Footprint> now;
  for (int i = 0; i < 100; i++) {
    now = footprint(pid);
    if (!now || (now->fds <= baseline.fds && now->shmem_kb <= baseline.shmem_kb)) return now;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return now;
}

struct RoundResult {
  int killed = 0, exited = 0, failed = 0;
  std::string answers;
  std::set<pid_t> pids;
};

RoundResult run_round(const Options& options, std::uint64_t seed) {
  RoundResult result;
  std::vector<pid_t> children;
  void* shared =
      mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw std::runtime_error("mmap of the shared tally failed");
  tally = new (shared) Tally{};
  for (int p = 0; p < options.procs; p++) {
    pid_t pid = fork();
    if (pid == 0) {
      struct sigaction sa {};
      sa.sa_handler = on_signal;  // no SA_RESTART: a blocked binder ioctl returns EINTR
      sigaction(SIGUSR1, &sa, nullptr);
      FuzzProcess process(options, seed * 1000 + p, /*manager=*/p == 0);
      _exit(process.run());
    }
    if (pid > 0) {
      children.push_back(pid);
      result.pids.insert(pid);
    }
  }
  auto deadline = Clock::now() + std::chrono::seconds(30);
  for (pid_t pid : children) {
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        std::printf("  pid %d hung (30 s): killed\n", pid);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        result.failed++;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      result.killed++;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kChildOk) {
      result.exited++;
    } else {
      std::printf("  pid %d failed: %s %d\n", pid, WIFEXITED(status) ? "exit" : "signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      result.failed++;
    }
  }
  result.answers = tally->summary();
  munmap(shared, sizeof(Tally));
  tally = nullptr;
  return result;
}

// Waits (bounded) until none of `ours` is in binder_logs/state; returns the ones left.
std::set<pid_t> leftover_procs(const std::string& state, const std::set<pid_t>& ours) {
  std::set<pid_t> left;
  for (int i = 0; i < 100; i++) {
    left.clear();
    auto procs = state_procs(state);
    if (!procs) return {};
    for (pid_t pid : *procs)
      if (ours.count(pid)) left.insert(pid);
    if (left.empty()) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return left;
}

int run(const Options& options) {
  bool check_state = state_procs(options.state).has_value();
  if (!check_state)
    std::printf("binder-fuzz: %s does not exist: skipping the binder_logs/state emptiness check\n",
                options.state.c_str());
  if (!device_alive(options.dev)) {
    std::fprintf(stderr, "binder-fuzz: %s does not answer BINDER_VERSION\n", options.dev.c_str());
    return 2;
  }
  auto start = Clock::now();
  auto end = start + std::chrono::duration<double>(options.duration);
  int failures = 0, rounds = 0, killed = 0, procs = 0;
  // Taken after the first round, once the daemon has made what it keeps (threads, arenas).
  std::optional<Footprint> baseline, last;
  long max_anon_kb = 0;
  for (std::uint64_t seed = options.seed;
       options.rounds ? rounds < options.rounds : Clock::now() < end; seed++, rounds++) {
    RoundResult round = run_round(options, seed);
    killed += round.killed;
    procs += options.procs;
    std::vector<std::string> problems;
    if (round.failed) problems.push_back(fmt::format("{} processes failed", round.failed));
    if (!device_alive(options.dev)) problems.push_back("the device no longer answers");
    if (check_state) {
      std::set<pid_t> left = leftover_procs(options.state, round.pids);
      if (!left.empty())
        problems.push_back(
            fmt::format("{} procs of this round still in binder_logs/state (first {})", left.size(),
                        *left.begin()));
    }
    if (options.daemon_pid) {
      last = baseline ? settled_footprint(options.daemon_pid, *baseline)
                      : footprint(options.daemon_pid);
      if (!last) {
        problems.push_back(fmt::format("daemon pid {} is gone", options.daemon_pid));
      } else if (!baseline) {
        baseline = last;
      } else if (last->fds > baseline->fds || last->shmem_kb > baseline->shmem_kb) {
        problems.push_back(
            fmt::format("the daemon holds {} fds and {} kB of memfd pages, {} and {} after round 0",
                        last->fds, last->shmem_kb, baseline->fds, baseline->shmem_kb));
      }
      if (last) max_anon_kb = std::max(max_anon_kb, last->anon_kb);
    }
    std::printf("round %d seed %llu: %d procs x %d threads, %d killed, %d exited%s\n", rounds,
                static_cast<unsigned long long>(seed), options.procs, options.threads, round.killed,
                round.exited, problems.empty() ? "" : ": FAILED");
    std::printf("  %s\n", round.answers.c_str());
    for (const auto& problem : problems) std::printf("  %s\n", problem.c_str());
    if (!problems.empty()) {
      failures++;
      std::printf(
          "  reproduce: binder-fuzz --dev %s --seed %llu --rounds 1 --procs %d "
          "--threads %d --steps %d\n",
          options.dev.c_str(), static_cast<unsigned long long>(seed), options.procs,
          options.threads, options.steps);
      if (problems.size() > 1 || !device_alive(options.dev)) break;  // nothing left to fuzz
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "binder-fuzz: %d rounds, %d processes (%d killed mid-stream) in %.1f s, %d failed "
      "rounds\n",
      rounds, procs, killed, seconds, failures);
  if (baseline && last)
    std::printf(
        "binder-fuzz: daemon pid %d after round 0 and at the end: %ld -> %ld fds, %ld -> %ld kB "
        "memfd pages, %ld -> %ld kB anonymous (at most %ld)\n",
        options.daemon_pid, baseline->fds, last->fds, baseline->shmem_kb, last->shmem_kb,
        baseline->anon_kb, last->anon_kb, max_anon_kb);
  return failures ? 1 : 0;
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  Options options;
  CLI::App app{"Random ioctl streams against a binder device, with self-kills and leak checks"};
  app.set_version_flag("--version", cused::version_text("binder-fuzz", nullptr));
  app.add_option("--dev", options.dev, "the binder device (cused's DIR/binder or /dev/binder)")
      ->required();
  options.seed = std::random_device{}();
  app.add_option("--seed", options.seed, "seed of the first round (each round: seed + n)");
  app.add_option("--duration", options.duration, "seconds to run (default 10)");
  app.add_option("--rounds", options.rounds, "run exactly this many rounds instead");
  app.add_option("--procs", options.procs, "processes per round (default 4)");
  app.add_option("--threads", options.threads, "threads per process (default 3)");
  app.add_option("--steps", options.steps, "ioctls per thread (default 200)");
  app.add_option("--state", options.state,
                 "binder_logs/state to check (default: beside the device)");
  app.add_option("--daemon-pid", options.daemon_pid,
                 "check after every round that this daemon (cused) holds no more fds and memfd "
                 "pages than after the first");
  CLI11_PARSE(app, argc, argv);
  if (options.state.empty())
    options.state =
        (std::filesystem::path(options.dev).parent_path() / "binder_logs" / "state").string();
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return run(options);
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}
