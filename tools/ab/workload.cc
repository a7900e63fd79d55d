// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/workload.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <variant>

#include "core/device_variant.h"

extern char** environ;

#include "tools/ab/stop_signals.h"

namespace cused::tools::ab {

namespace {

using Clock = std::chrono::steady_clock;

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// Closes the descriptor when the scope ends, whatever path it takes.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Reads everything the child writes to stdout until EOF or `deadline`; false at the deadline.
bool collect_output(int fd, Clock::time_point deadline, std::string& output) {
  char buffer[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd poll_fd{fd, POLLIN, 0};
    int ready = poll(&poll_fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return true;
    output.append(buffer, static_cast<std::size_t>(got));
  }
}

}  // namespace

Variant resolve_variant(const std::string& text, const std::string& mount_dir) {
  // A path, unless it is NAME:SPEC (a spec may hold paths: alloc_lock=kernel:/src/linux).
  auto spec = core::split_device_spec(text);
  if (spec.name.find('/') != std::string::npos) return {.label = text, .device = text};
  if (spec.variant.empty()) return {.label = spec.name, .device = mount_dir + "/" + spec.name};
  auto parsed = core::parse_device_variant(spec.variant);
  if (auto* error = std::get_if<core::VariantSpecError>(&parsed))
    throw std::invalid_argument(fmt::format("{}: {}", text, error->message));
  return {.label = fmt::format("{}:{}", spec.name, spec.variant),
          .device = mount_dir + "/" + spec.name,
          .spec = spec.variant};
}

std::vector<std::string> substitute(const std::vector<std::string>& words, const Variant& variant) {
  std::vector<std::string> result;
  for (std::string word : words) {
    replace_all(word, "{dev}", variant.device);
    replace_all(word, "{label}", variant.label);
    result.push_back(std::move(word));
  }
  return result;
}

std::optional<double> extract_metric(const std::string& output, const std::regex& metric) {
  std::optional<double> value;
  for (std::sregex_iterator it(output.begin(), output.end(), metric), end; it != end; ++it) {
    if (it->size() < 2) continue;
    try {
      value = std::stod((*it)[1].str());
    } catch (const std::exception&) {
      // Not a number: an earlier match, if any, stands.
    }
  }
  return value;
}

bool CommandResult::succeeded() const {
  return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return fmt::format("wait status {}", status);
}

std::string CommandResult::describe_failure() const {
  if (timed_out) return fmt::format("timed out after {:.1f} s", elapsed.count());
  return describe_wait_status(status);
}

CommandResult run_command(const std::vector<std::string>& argv,
                          std::chrono::duration<double> limit) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) < 0) throw std::system_error(errno, std::generic_category());
  Fd read_end{pipe_fds[0]}, write_end{pipe_fds[1]};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // stderr too: a run's complaints belong with its output, shown when it fails, not mixed
  // into binder-ab's table.
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own group, so that a timeout also ends the workload's forked workers.
  spawn_in_own_group(&attributes);
  std::vector<char*> words;
  for (const auto& word : argv) words.push_back(const_cast<char*>(word.c_str()));
  words.push_back(nullptr);

  CommandResult result;
  auto start = Clock::now();
  pid_t pid = -1;
  int error = posix_spawnp(&pid, words[0], &actions, &attributes, words.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) throw std::system_error(error, std::generic_category(), argv[0]);
  close(write_end.fd);
  write_end.fd = -1;
  StopCleanup on_stop_signal([pid] { kill(-pid, SIGKILL); });  // a run is worth nothing then

  auto deadline = start + std::chrono::duration_cast<Clock::duration>(limit);
  if (!collect_output(read_end.fd, deadline, result.output)) {
    result.timed_out = true;
    kill(-pid, SIGKILL);
  }
  waitpid(pid, &result.status, 0);
  result.elapsed = Clock::now() - start;
  return result;
}

}  // namespace cused::tools::ab
