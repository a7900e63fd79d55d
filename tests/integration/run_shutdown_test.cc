// SPDX-License-Identifier: GPL-2.0-only
// Stopping `cused run` and `cused --mount DIR --foreground` with SIGTERM and SIGINT at random
// moments, while two CPU hogs run (issue 35): the signal goes to the whole process group (what
// Ctrl-C and timeout(1) do), to the launcher only, or to the program only. Every stop must end
// with the exit status a shell expects, leave no mount and no directory behind, no daemon
// running, and no exception text on stderr. CUSED_SHUTDOWN_SEED=N repeats a sequence.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/file_contents.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

extern char** environ;

namespace cused {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::binary_from_env;
using testing::mounts_under;
using testing::read_file;
using testing::wait_until;

constexpr int kRunStops = 50, kDaemonStops = 20;
constexpr auto kStopLimit = 10s;

// Processes that keep both CPUs busy, so that the launcher, its daemon and its program are
// preempted at arbitrary points (where the races were).
class CpuHogs {
 public:
  explicit CpuHogs(int count) {
    for (int i = 0; i < count; ++i) {
      pid_t pid = fork();
      if (pid == 0) spin();
      pids_.push_back(pid);
    }
  }
  [[noreturn]] static void spin() {
    volatile unsigned long count = 0;  // a side effect: the loop is not optimized away
    for (;;) count = count + 1;
  }
  ~CpuHogs() {
    for (pid_t pid : pids_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }

 private:
  std::vector<pid_t> pids_;
};

// A command run as a terminal runs it: leader of a process group of its own (so that a signal to
// "the group" does not reach the test), stderr kept in a file, TMPDIR set.
class Command {
 public:
  Command(std::vector<std::string> words, const std::string& tmpdir, const std::string& stderr_path)
      : stderr_path_(stderr_path) {
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    std::vector<std::string> variables{"TMPDIR=" + tmpdir};
    for (char** variable = environ; *variable; ++variable)
      if (std::string(*variable).rfind("TMPDIR=", 0) != 0) variables.push_back(*variable);
    std::vector<char*> envp;
    for (auto& variable : variables) envp.push_back(variable.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    if (posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), envp.data()) != 0)
      pid_ = -1;
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Command() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Command(const Command&) = delete;
  Command& operator=(const Command&) = delete;

  pid_t pid() const { return pid_; }
  // Waits until main() has blocked `signal` (it handles it from there on); false if it never did.
  bool wait_for_main(int signal) const {
    return wait_until(
        [&] {
          std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
          std::string line;
          while (std::getline(status, line))
            if (line.rfind("SigBlk:", 0) == 0)
              return ((std::stoull(line.substr(7), nullptr, 16) >> (signal - 1)) & 1) != 0;
          return false;
        },
        2s);
  }
  // The exit status as a shell reports it ($?), or -1 if it did not end within `limit`.
  int finish(std::chrono::seconds limit) {
    int status = 0;
    if (!wait_until([&] { return waitpid(pid_, &status, WNOHANG) == pid_; }, limit)) return -1;
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string errors() const { return read_file(stderr_path_); }

 private:
  pid_t pid_ = -1;
  std::string stderr_path_;
};

// The child of `parent` named `comm` in `parent`'s process group (the program, not a
// servicemanager of its own group), or 0.
pid_t program_of(pid_t parent, const std::string& comm) {
  std::string base = "/proc/" + std::to_string(parent);
  std::istringstream children(read_file(base + "/task/" + std::to_string(parent) + "/children"));
  for (pid_t child; children >> child;) {
    std::string name = read_file("/proc/" + std::to_string(child) + "/comm");
    if (name == comm + "\n" && getpgid(child) == parent) return child;
  }
  return 0;
}

// Processes whose command line names `path` (a daemon left running on a directory there).
std::vector<pid_t> processes_naming(const std::string& path) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    pid_t pid = std::atoi(entry.path().filename().c_str());
    if (pid <= 0) continue;
    std::string cmdline = read_file(entry.path() / "cmdline");
    if (cmdline.find(path) != std::string::npos) found.push_back(pid);
  }
  return found;
}

// What is wrong after a stop that ended with `status` (`expected`) and printed `errors`: the
// status, a mount, a directory or a daemon left under `scratch`, exception text; empty if nothing.
std::string what_went_wrong(int status, int expected, const std::string& scratch,
                            const std::string& errors) {
  std::vector<std::string> wrong;
  if (status != expected)
    wrong.push_back(status < 0 ? "did not end" : fmt::format("exit status {}", status));
  if (auto left = mounts_under(scratch); !left.empty())
    wrong.push_back(fmt::format("mount left: {}", fmt::join(left, " ")));
  for (const auto& entry : fs::directory_iterator(scratch))
    if (entry.path().extension() != ".stderr")
      wrong.push_back("directory left: " + entry.path().string());
  if (auto daemons = processes_naming(scratch); !daemons.empty())
    wrong.push_back(fmt::format("still running: {}", fmt::join(daemons, " ")));
  for (const char* text :
       {"terminate called", "exception", "what()", "filesystem error", "Transport endpoint"})
    if (errors.find(text) != std::string::npos) {
      wrong.push_back("stderr: " + errors);
      break;
    }
  return fmt::format("{}", fmt::join(wrong, "; "));
}

// Cleans up after a failed stop, so that the next one starts from nothing.
void clean(const std::string& scratch) {
  for (const auto& mountpoint : mounts_under(scratch)) umount2(mountpoint.c_str(), MNT_DETACH);
  for (pid_t pid : processes_naming(scratch)) kill(pid, SIGKILL);
  for (const auto& entry : fs::directory_iterator(scratch))
    if (entry.path().extension() != ".stderr") fs::remove_all(entry.path());
}

unsigned seed() {
  const char* given = std::getenv("CUSED_SHUTDOWN_SEED");
  unsigned value =
      given ? static_cast<unsigned>(std::strtoul(given, nullptr, 10)) : std::random_device{}();
  std::printf("CUSED_SHUTDOWN_SEED=%u\n", value);
  return value;
}

enum class Target { kGroup, kLauncher, kProgram };

const char* name_of(Target target) {
  switch (target) {
    case Target::kGroup:
      return "the group";
    case Target::kLauncher:
      return "the launcher";
    case Target::kProgram:
      return "the program";
  }
  return "?";
}

class RunShutdownTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::this_thread::sleep_for(100ms);  // a killed daemon's last exit
    clean(scratch_);
    fs::remove_all(scratch_);
  }
  // Checks one stop; counts it if it went wrong.
  void check(const std::string& run, int status, int expected, const std::string& errors) {
    std::string wrong = what_went_wrong(status, expected, scratch_, errors);
    if (wrong.empty()) return;
    ++failed_;
    ADD_FAILURE() << run << ": " << wrong;
    clean(scratch_);
  }
  void report(int runs) const { std::printf("%d of %d stops went wrong\n", failed_, runs); }

  std::string cused_ = binary_from_env("CUSED_BINARY");
  std::string servicemanager_ = binary_from_env("SERVICEMANAGER_BINARY");
  std::string scratch_ = testing::make_temp_dir("cused-shutdown-");
  std::mt19937 random_{seed()};
  int failed_ = 0;
};

// `cused run -- servicemanager` (every third run: `cused run --servicemanager -- sleep`, a
// servicemanager started for the program) stopped by SIGTERM or SIGINT to the group, the
// launcher or the program: the status is 128 + the signal (the program's death, or the
// launcher's stop before it ran), and nothing is left.
TEST_F(RunShutdownTest, RunStopsCleanlyOnSigtermAndSigint) {
  CpuHogs hogs(2);
  for (int run = 0; run < kRunStops; ++run) {
    int signal = random_() % 2 ? SIGTERM : SIGINT;
    auto target = static_cast<Target>(random_() % 3);
    bool with_manager = run % 3 == 2;
    auto delay = std::chrono::milliseconds(random_() % 300);
    std::string what =
        fmt::format("run {}: {} to {} after {} ms{}", run, strsignal(signal), name_of(target),
                    delay.count(), with_manager ? ", --servicemanager" : "");
    std::vector<std::string> words{cused_, "run"};
    if (with_manager) words.push_back("--servicemanager=" + servicemanager_);
    words.push_back("--");
    if (with_manager)
      words.insert(words.end(), {"/bin/sleep", "1000"});
    else
      words.push_back(servicemanager_);
    Command command(words, scratch_, scratch_ + "/run.stderr");
    ASSERT_GT(command.pid(), 0);
    ASSERT_TRUE(command.wait_for_main(signal)) << what;
    if (target == Target::kProgram) {
      std::string comm = with_manager ? "sleep" : "servicemanager";
      pid_t program = 0;
      if (wait_until([&] { return (program = program_of(command.pid(), comm)) > 0; }, 10s)) {
        std::this_thread::sleep_for(delay / 3);
        kill(program, signal);
      }
    } else {
      std::this_thread::sleep_for(delay);
      kill(target == Target::kGroup ? -command.pid() : command.pid(), signal);
    }
    int status = command.finish(kStopLimit);
    check(what, status, 128 + signal, command.errors());
  }
  report(kRunStops);
}

// `cused --mount DIR --foreground` on a DIR it creates, stopped by SIGTERM or SIGINT while it
// starts or serves: exit 0, no mount, DIR removed again.
TEST_F(RunShutdownTest, DaemonStopsCleanlyOnSigtermAndSigint) {
  CpuHogs hogs(2);
  for (int run = 0; run < kDaemonStops; ++run) {
    int signal = random_() % 2 ? SIGTERM : SIGINT;
    auto delay = std::chrono::milliseconds(random_() % 300);
    std::string what = fmt::format("run {}: {} after {} ms", run, strsignal(signal), delay.count());
    std::string dir = scratch_ + "/mount-" + std::to_string(run);
    Command command({cused_, "--mount", dir, "--foreground"}, scratch_,
                    scratch_ + "/daemon.stderr");
    ASSERT_GT(command.pid(), 0);
    ASSERT_TRUE(command.wait_for_main(signal)) << what;
    std::this_thread::sleep_for(delay);
    kill(-command.pid(), signal);
    int status = command.finish(kStopLimit);
    check(what, status, 0, command.errors());
  }
  report(kDaemonStops);
}

}  // namespace
}  // namespace cused
