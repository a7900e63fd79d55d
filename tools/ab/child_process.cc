// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

namespace cused::tools::ab {

namespace {

// In the forked child, before it runs its program: a group of its own, nothing of binder-ab's
// signal mask, its nice, its output. System calls only (a fork of a threaded program).
void prepare_child(const ChildOptions& options) {
  setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::signal(signal, SIG_DFL);
  if (options.nice) setpriority(PRIO_PROCESS, 0, *options.nice);
  int null = open("/dev/null", O_RDWR);
  dup2(null, STDIN_FILENO);
  if (options.quiet) {
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
  } else {
    dup2(STDERR_FILENO, STDOUT_FILENO);  // the table stays alone on binder-ab's stdout
  }
  if (null > STDERR_FILENO) close(null);
}

// Ends the group `pid` leads: SIGTERM, then SIGKILL once `grace` has passed. Used from the
// signal watcher too: it touches no member of the object.
void end_group(pid_t pid, std::chrono::duration<double> grace) {
  kill(-pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (kill(-pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    // A leader that has exited but is not reaped keeps the group "alive": reap it here.
    waitpid(pid, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(-pid, SIGKILL);
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, ChildOptions options) {
  std::vector<char*> words;
  for (const auto& word : argv) words.push_back(const_cast<char*>(word.c_str()));
  words.push_back(nullptr);
  // The exec's failure comes back through a close-on-exec pipe: nothing read means it ran.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  pid_ = fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid_ == 0) {
    close(report[0]);
    prepare_child(options);
    execvp(words[0], words.data());
    int error = errno;
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  close(report[1]);
  setpgid(pid_, pid_);  // also from here, so that stop() finds the group however soon it comes
  watch_for_stop_signal();
  int error = 0;
  ssize_t got = read(report[0], &error, sizeof error);
  close(report[0]);
  if (got == sizeof error) {
    stop();
    throw std::system_error(error, std::generic_category(), "cannot run " + argv.front());
  }
}

ChildProcess::ChildProcess(void (*body)(long argument), long argument, ChildOptions options) {
  pid_ = fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid_ == 0) {
    prepare_child(options);
    body(argument);
    _exit(0);
  }
  setpgid(pid_, pid_);
  watch_for_stop_signal();
}

void ChildProcess::watch_for_stop_signal() {
  on_stop_signal_.emplace([pid = pid_] { end_group(pid, std::chrono::seconds(2)); });
}

ChildProcess::~ChildProcess() { stop(); }

bool ChildProcess::running() {
  if (reaped_ || pid_ < 0) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

void ChildProcess::stop(std::chrono::duration<double> grace) {
  if (pid_ < 0) return;
  if (running() || kill(-pid_, 0) == 0) end_group(pid_, grace);
  if (!reaped_) waitpid(pid_, &status_, 0);
  reaped_ = true;
  // Only now: a stop signal during the ending above still ends the group from the watcher.
  on_stop_signal_.reset();
  pid_ = -1;
}

}  // namespace cused::tools::ab
