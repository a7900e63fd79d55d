// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <vector>

#include "cused/run/attach.h"
#include "cused/run/child_process.h"
#include "cused/run/context_manager.h"
#include "cused/run/private_dev.h"
#include "cused/run/seccomp_filter.h"
#include "cused/stop_signals.h"

extern char** environ;

namespace cused::run {

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kRunFailed = 125, kCannotRun = 126, kNotFound = 127;
constexpr auto kStartLimit = std::chrono::seconds(10);  // a daemon's socket, a manager's answer
constexpr milliseconds kManagerStopLimit{5000}, kDaemonStopLimit{10000};
constexpr milliseconds kStartPoll{10};

void say(const std::string& text) { fmt::print(stderr, "cused run: {}\n", text); }

// A stop signal that came before the program ran: cused run ends as if it had killed the program.
struct Stopped {
  int signal;
};

// A failure of cused run itself: the message has been printed.
struct Failed {};

// The launcher's stop signals, read from a signalfd (main blocked them in every thread).
class StopSignalFd {
 public:
  StopSignalFd() {
    sigset_t signals = StopSignals::set();
    fd_ = signalfd(-1, &signals, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "signalfd");
  }
  ~StopSignalFd() { close(fd_); }
  StopSignalFd(const StopSignalFd&) = delete;
  StopSignalFd& operator=(const StopSignalFd&) = delete;

  struct Taken {
    int signal = 0;  // 0: none pending
    // Sent by the terminal (Ctrl-C, a hangup) to its foreground process group, the program
    // included: passing it on would deliver it twice.
    bool from_terminal = false;
  };

  int fd() const { return fd_; }
  // The next pending stop signal.
  Taken take() const {
    signalfd_siginfo info{};
    if (read(fd_, &info, sizeof info) != sizeof info) return {};
    return {static_cast<int>(info.ssi_signo), info.ssi_code == SI_KERNEL};
  }

 private:
  int fd_ = -1;
};

// Waits up to `limit` for a stop signal or the exit of `child` (-1: none); throws Stopped for a
// signal, returns whether the child has exited.
bool pause(const StopSignalFd& signals, int child_pidfd, milliseconds limit) {
  pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {child_pidfd, POLLIN, 0}};
  int count = child_pidfd >= 0 ? 2 : 1;
  if (poll(fds, count, static_cast<int>(limit.count())) < 0) return false;
  if (int signal = signals.take().signal) throw Stopped{signal};
  return count == 2 && (fds[1].revents & POLLIN);
}

// The directory of a mount of the launcher's own daemon: a temporary one is removed at the end,
// and the mount is detached first if the daemon died without unmounting it (a removal under a
// mount fails with EBUSY, and a dead mount answers "Transport endpoint is not connected").
class OwnMount {
 public:
  // `path` empty: a fresh directory under $TMPDIR (default /tmp), removed at the end.
  explicit OwnMount(const std::string& path) {
    if (!path.empty()) {
      path_ = fs::absolute(path).lexically_normal().string();
      return;
    }
    const char* tmpdir = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/cused-run-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(pattern.data())) {
      say(fmt::format("cannot make a directory for the mount ({}): {}", pattern,
                      std::strerror(errno)));
      throw Failed{};
    }
    path_ = pattern;
    temporary_ = true;
  }
  ~OwnMount() {
    detach_if_left();
    if (temporary_ && rmdir(path_.c_str()) != 0)
      say(fmt::format("cannot remove {}: {}", path_, std::strerror(errno)));
  }
  OwnMount(const OwnMount&) = delete;
  OwnMount& operator=(const OwnMount&) = delete;

  const std::string& path() const { return path_; }
  // The daemon serves: its mount is the one to detach if it is left behind.
  void served() {
    struct stat st {};
    if (stat(path_.c_str(), &st) == 0) device_ = st.st_dev;
  }
  // The daemon's mount, if still there (its daemon died): detached.
  void detach_if_left() {
    if (!device_) return;
    struct stat st {};
    bool dead = stat(path_.c_str(), &st) != 0 && errno == ENOTCONN;
    if (dead || (st.st_dev == *device_)) umount2(path_.c_str(), MNT_DETACH);
    device_.reset();
  }

 private:
  std::string path_;
  bool temporary_ = false;
  std::optional<dev_t> device_;
};

// A daemon `cused run` started for the program, in a process group of its own: a signal to the
// launcher's group does not reach it, the launcher stops it (SIGTERM, a clean unmount) last.
std::unique_ptr<ChildProcess> start_daemon(const RunOptions& options, const std::string& mount) {
  std::vector<std::string> words{options.daemon, "--mount", mount, "--foreground"};
  for (const auto& device : options.devices) words.insert(words.end(), {"--device", device});
  if (!options.variant.empty()) words.insert(words.end(), {"--variant", options.variant});
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  int error = posix_spawn(&pid, argv[0], nullptr, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    say(fmt::format("cannot start a daemon ({}): {}", options.daemon, std::strerror(error)));
    throw Failed{};
  }
  return std::make_unique<ChildProcess>(pid);
}

// Waits until the daemon's run socket answers; its connection.
int connect_when_ready(ChildProcess& daemon, const std::string& mount,
                       const StopSignalFd& signals) {
  auto deadline = Clock::now() + kStartLimit;
  for (;;) {
    if (int fd = connect_to_daemon(mount); fd >= 0) return fd;
    if (Clock::now() > deadline || pause(signals, daemon.pidfd(), kStartPoll) || daemon.status()) {
      say("no cused serves " + mount + " and none could be started there");
      throw Failed{};
    }
  }
}

// The binder devices of the mount: what /dev gets links to.
std::vector<std::string> device_names(const std::string& mount) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(mount, error)) {
    std::string name = entry.path().filename().string();
    if (name != "binder-control" && entry.is_regular_file(error)) names.push_back(name);
  }
  return names;
}

// The side of the fork that becomes `command`: namespace, /dev, filter, hand-over, exec; in a
// process group of its own if `own_group`. Never returns.
[[noreturn]] void become(const std::vector<std::string>& command, const std::string& mount,
                         const std::vector<std::string>& names, int connection, bool own_group) {
  std::string error;
  if (own_group) setpgid(0, 0);
  if (unshare(CLONE_NEWNS) != 0 ||
      ::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) {
    say(fmt::format("a mount namespace of its own: {}", std::strerror(errno)));
    _exit(kRunFailed);
  }
  if (make_private_dev(mount, names, error) != 0) {
    say("the program's /dev: " + error);
    _exit(kRunFailed);
  }
  int listener = install_binder_ioctl_filter();
  if (listener < 0) {
    say(fmt::format("seccomp filter: {}", std::strerror(-listener)));
    _exit(kRunFailed);
  }
  if (int err = hand_over(connection, listener); err != 0) {
    say(fmt::format("the daemon did not take the program: {}", std::strerror(err)));
    _exit(kRunFailed);
  }
  close(listener);  // the daemon's copy serves; the program must not hold its own listener
  close(connection);
  // Tells the program (and tests that run on several paths) how its binder calls are served.
  setenv(kRunEnvironment, mount.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  // Blocked until here, so that a stop signal does not cut the set-up short; one that came
  // meanwhile ends the process now, before the program runs.
  sigset_t signals = StopSignals::set();
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
  execvp(argv[0], argv.data());
  int err = errno;
  say(fmt::format("{}: {}", command[0], std::strerror(err)));
  _exit(err == ENOENT ? kNotFound : kCannotRun);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kRunFailed;
}

class Launch {
 public:
  explicit Launch(const RunOptions& options) : options_(options), mount_(options.mount) {}
  // Stops what it started: the program (if an error left it running), the servicemanager, then
  // the daemon; then ~OwnMount.
  ~Launch() {
    if (program_) program_->stop(SIGKILL, milliseconds(-1));
    if (manager_) manager_->stop(SIGTERM, kManagerStopLimit);
    if (daemon_) daemon_->stop(SIGTERM, kDaemonStopLimit);
  }
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;

  int run() {
    attach_or_start_daemon();
    std::vector<std::string> names = device_names(mount_.path());
    if (options_.servicemanager) start_manager(names);
    program_ = spawn(options_.command, names, false);
    return exit_code_of(wait_for_program());
  }

 private:
  void attach_or_start_daemon() {
    int connection = connect_to_daemon(mount_.path());
    if (connection < 0) {
      daemon_ = start_daemon(options_, mount_.path());
      connection = connect_when_ready(*daemon_, mount_.path(), signals_);
      mount_.served();
    } else if (!options_.devices.empty() || !options_.variant.empty()) {
      say("--device and --variant are for a daemon cused run starts; " + mount_.path() +
          " is served already");
      close(connection);
      throw Failed{};
    }
    // Not kept for the program: the daemon takes attaches one at a time, in order, and would
    // wait on this one while the servicemanager's is pending.
    close(connection);
  }

  // Forks the process that becomes `command`, attached through a connection of its own.
  std::unique_ptr<ChildProcess> spawn(const std::vector<std::string>& command,
                                      const std::vector<std::string>& names, bool own_group) {
    int connection = connect_to_daemon(mount_.path());
    if (connection < 0) {
      say("the daemon serving " + mount_.path() + " went away");
      throw Failed{};
    }
    pid_t pid = fork();
    if (pid == 0) become(command, mount_.path(), names, connection, own_group);
    int error = errno;
    close(connection);
    if (pid < 0) {
      say(fmt::format("fork: {}", std::strerror(error)));
      throw Failed{};
    }
    return std::make_unique<ChildProcess>(pid);
  }

  // --servicemanager: a context manager on the mount's `binder`, answering before the program
  // starts; refused if one answers already (a second could not register).
  void start_manager(const std::vector<std::string>& names) {
    std::string node = mount_.path() + "/binder";
    if (std::find(names.begin(), names.end(), "binder") == names.end()) {
      say("--servicemanager: " + mount_.path() + " has no binder device for it to serve");
      throw Failed{};
    }
    if (context_manager_answers(node)) {
      say("--servicemanager: a context manager already answers on " + node +
          "; leave out --servicemanager to use it");
      throw Failed{};
    }
    std::string program = options_.servicemanager->empty() ? default_servicemanager(options_.daemon)
                                                           : *options_.servicemanager;
    // In a group of its own: it stops after the program, which may still need it.
    manager_ = spawn({program}, names, true);
    auto deadline = Clock::now() + kStartLimit;
    while (!context_manager_answers(node)) {
      if (pause(signals_, manager_->pidfd(), kStartPoll) || manager_->status()) {
        say(fmt::format("--servicemanager: {} ended before it answered ({})", program,
                        describe(*manager_->status())));
        throw Failed{};
      }
      if (Clock::now() > deadline) {
        say(fmt::format("--servicemanager: {} does not answer on {}", program, node));
        throw Failed{};
      }
    }
  }

  static std::string describe(int status) {
    if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
    return fmt::format("exit status {}", WEXITSTATUS(status));
  }

  // Passes stop signals on to the program until it ends; its wait status. A daemon that dies
  // meanwhile leaves its mount detached at once, so that the program sees no dead mount.
  int wait_for_program() {
    bool daemon_watched = daemon_ != nullptr;
    for (;;) {
      pollfd fds[3] = {{signals_.fd(), POLLIN, 0},
                       {program_->pidfd(), POLLIN, 0},
                       {daemon_watched ? daemon_->pidfd() : -1, POLLIN, 0}};
      if (poll(fds, 3, -1) < 0 && errno != EINTR) {
        say(fmt::format("poll: {}", std::strerror(errno)));
        return program_->stop(SIGKILL, milliseconds(-1));
      }
      for (auto taken = signals_.take(); taken.signal; taken = signals_.take())
        if (!taken.from_terminal) program_->signal(taken.signal);
      if (auto status = program_->status()) return *status;
      if (daemon_watched && daemon_->status()) {
        mount_.detach_if_left();
        daemon_watched = false;
      }
    }
  }

  const RunOptions& options_;
  StopSignalFd signals_;
  OwnMount mount_;  // destroyed after the children: a daemon unmounts before the removal
  std::unique_ptr<ChildProcess> daemon_, manager_, program_;
};

}  // namespace

int launch(const RunOptions& options) {
  if (options.command.empty()) {
    say("no program given: cused run [--mount DIR] -- PROGRAM ARGS...");
    return kRunFailed;
  }
  if (geteuid() != 0) {
    say("needs root (a mount namespace and a seccomp filter without no_new_privs)");
    return kRunFailed;
  }
  try {
    return Launch(options).run();
  } catch (const Stopped& stopped) {
    return 128 + stopped.signal;
  } catch (const Failed&) {
    return kRunFailed;
  } catch (const std::exception& error) {
    say(error.what());
    return kRunFailed;
  }
}

}  // namespace cused::run
