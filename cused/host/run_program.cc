// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/run_program.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace cused::host {

bool run_program(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  // Made before the fork: the child of a threaded daemon only writes and exits.
  const std::string cannot_run = "cannot run " + argv.front() + ": ";
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execvp(args[0], args.data());
    const char* why = strerrordesc_np(errno);
    const iovec line[] = {{const_cast<char*>(cannot_run.data()), cannot_run.size()},
                          {const_cast<char*>(why), std::strlen(why)},
                          {const_cast<char*>("\n"), 1}};
    [[maybe_unused]] const ssize_t written = writev(2, line, 3);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::optional<std::filesystem::path> find_program(const std::string& program) {
  if (program.empty()) return std::nullopt;
  auto executable = [](const std::filesystem::path& path) {
    std::error_code ec;  // no exception: a daemon's request handler may ask
    return access(path.c_str(), X_OK) == 0 && !std::filesystem::is_directory(path, ec);
  };
  if (program.find('/') != std::string::npos)
    return executable(program) ? std::optional<std::filesystem::path>(program) : std::nullopt;
  const char* path = std::getenv("PATH");
  // execvp's own default when PATH is unset.
  std::string_view dirs = path ? path : "/bin:/usr/bin";
  while (true) {
    const std::string_view dir = dirs.substr(0, dirs.find(':'));
    // An empty entry is the working directory, as for execvp.
    const std::filesystem::path candidate =
        std::filesystem::path(dir.empty() ? "." : std::string(dir)) / program;
    if (executable(candidate)) return candidate;
    if (dir.size() == dirs.size()) return std::nullopt;
    dirs.remove_prefix(dir.size() + 1);
  }
}

}  // namespace cused::host
