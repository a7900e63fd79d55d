#include "cused/run/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "cused/run/attach.h"
#include "cused/run/private_dev.h"
#include "cused/run/run_server.h"
#include "cused/run/seccomp_filter.h"
#include "uapi/cused_run.h"

extern char** environ;

namespace cused::run {

namespace {

namespace fs = std::filesystem;

constexpr int kRunFailed = 125, kCannotRun = 126, kNotFound = 127;
constexpr auto kDaemonStartLimit = std::chrono::seconds(10);

void say(const std::string& text) { fmt::print(stderr, "cused run: {}\n", text); }

// A daemon `cused run` started for the program: stopped (SIGTERM, a clean unmount) at the end.
class OwnDaemon {
 public:
  OwnDaemon(const RunOptions& options, const std::string& mount) {
    std::vector<std::string> words{options.daemon, "--mount", mount, "--foreground"};
    for (const auto& device : options.devices) words.insert(words.end(), {"--device", device});
    if (!options.variant.empty()) words.insert(words.end(), {"--variant", options.variant});
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
  }
  ~OwnDaemon() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  OwnDaemon(const OwnDaemon&) = delete;
  OwnDaemon& operator=(const OwnDaemon&) = delete;

  // Waits until the daemon's run socket answers; -1 if it exited or took too long.
  int connect(const std::string& mount) {
    auto deadline = std::chrono::steady_clock::now() + kDaemonStartLimit;
    while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
      if (int fd = connect_to_daemon(mount); fd >= 0) return fd;
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
};

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

// The program's side of the fork: namespace, /dev, filter, hand-over, exec. Never returns.
[[noreturn]] void become_program(const RunOptions& options, const std::string& mount,
                                 const std::vector<std::string>& names, int connection) {
  std::string error;
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
  for (const auto& word : options.command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  int err = errno;
  say(fmt::format("{}: {}", options.command[0], std::strerror(err)));
  _exit(err == ENOENT ? kNotFound : kCannotRun);
}

pid_t g_program = 0;

// The launcher's stop signals go on to the program (a terminal's SIGINT reaches both already).
void forward_signal(int signal) {
  if (g_program > 0) kill(g_program, signal);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kRunFailed;
}

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
  std::string mount = options.mount;
  std::optional<fs::path> temporary;
  if (mount.empty()) {
    char pattern[] = "/tmp/cused-run-XXXXXX";
    if (!mkdtemp(pattern)) {
      say(fmt::format("mkdtemp: {}", std::strerror(errno)));
      return kRunFailed;
    }
    temporary = mount = pattern;
  }
  mount = fs::absolute(mount).lexically_normal().string();
  std::optional<OwnDaemon> daemon;
  int connection = connect_to_daemon(mount);
  if (connection >= 0 && (!options.devices.empty() || !options.variant.empty())) {
    say("--device and --variant are for a daemon cused run starts; " + mount +
        " is served already");
    close(connection);
    return kRunFailed;
  }
  if (connection < 0) {
    daemon.emplace(options, mount);
    connection = daemon->connect(mount);
  }
  if (connection < 0) {
    say("no cused serves " + mount + " and none could be started there");
    if (temporary) fs::remove(*temporary);
    return kRunFailed;
  }
  std::vector<std::string> names = device_names(mount);
  g_program = fork();
  if (g_program < 0) {
    say(fmt::format("fork: {}", std::strerror(errno)));
    return kRunFailed;
  }
  if (g_program == 0) become_program(options, mount, names, connection);
  close(connection);
  for (int stop : {SIGTERM, SIGHUP}) ::signal(stop, forward_signal);
  ::signal(SIGINT, SIG_IGN);  // the program has it from the terminal; it decides
  int status = 0;
  while (waitpid(g_program, &status, 0) < 0 && errno == EINTR) {
  }
  daemon.reset();  // its clean stop unmounts
  if (temporary) fs::remove(*temporary);
  return exit_code_of(status);
}

}  // namespace cused::run
