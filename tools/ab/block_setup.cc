// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/block_setup.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "tools/ab/stop_signals.h"
#include "tools/ab/workload.h"

extern char** environ;

namespace cused::tools::ab {

namespace {

bool one_of_ours(std::string_view entry) {
  return entry.starts_with("CUSED_AB_BLOCK=") || entry.starts_with("CUSED_AB_READY=");
}

std::vector<std::string> environment_with_block(int block, const std::string& ready_file) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry)
    if (!one_of_ours(*entry)) entries.emplace_back(*entry);
  entries.push_back("CUSED_AB_BLOCK=" + std::to_string(block));
  if (!ready_file.empty()) entries.push_back("CUSED_AB_READY=" + ready_file);
  return entries;
}

std::vector<char*> pointers(std::vector<std::string>& words) {
  std::vector<char*> out;
  for (auto& word : words) out.push_back(word.data());
  out.push_back(nullptr);
  return out;
}

// SIGTERM to the leader (a script that traps it stops what it started in its own order); once
// it is gone, or after `grace`, SIGTERM to whatever is left in its group, and after another
// `grace` SIGKILL. Touches no member: binder-ab's signal watcher runs it beside the main thread.
void stop_group(pid_t leader, std::chrono::duration<double> grace) {
  auto wait_until = [grace](auto gone) {
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (!gone() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  kill(leader, SIGTERM);
  wait_until([leader] { return waitpid(leader, nullptr, WNOHANG) != 0; });
  kill(-leader, SIGTERM);
  wait_until([leader] { return kill(-leader, 0) != 0; });
  kill(-leader, SIGKILL);
}

}  // namespace

BlockSetup::BlockSetup(const std::string& command, int block, const std::string& ready_file) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // A group of its own: stop() reaches whatever it started that stayed in it.
  spawn_in_own_group(&attributes);
  std::vector<std::string> argv{"/bin/sh", "-c", command};
  auto environment = environment_with_block(block, ready_file);
  int error = posix_spawn(&pid_, "/bin/sh", &actions, &attributes, pointers(argv).data(),
                          pointers(environment).data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) throw std::system_error(error, std::generic_category(), "--block-setup");
  on_stop_signal_.emplace([pid = pid_] { stop_group(pid, std::chrono::seconds(5)); });
}

BlockSetup::~BlockSetup() { stop(); }

bool BlockSetup::running() {
  if (reaped_) return false;
  pid_t got = waitpid(pid_, &status_, WNOHANG);
  if (got == pid_) reaped_ = true;
  return !reaped_;
}

std::string BlockSetup::describe_end() const {
  return "--block-setup " + describe_wait_status(status_);
}

bool BlockSetup::wait_for_leader(std::chrono::duration<double> limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

void BlockSetup::stop(std::chrono::duration<double> grace) {
  if (pid_ < 0) return;
  if (running()) {
    kill(pid_, SIGTERM);
    if (!wait_for_leader(grace)) kill(-pid_, SIGTERM);
    if (!wait_for_leader(grace)) kill(-pid_, SIGKILL);
    if (!reaped_) waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  // What the leader left behind in its group (a daemon a shell started and did not wait for).
  if (kill(-pid_, 0) == 0) {
    kill(-pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (kill(-pid_, 0) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kill(-pid_, SIGKILL);
  }
  pid_ = -1;
}

}  // namespace cused::tools::ab
