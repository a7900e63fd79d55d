// SPDX-License-Identifier: GPL-2.0-only
#include "cused/background.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace cused {

Background::Background(const std::string& what) {
  int verdict[2];
  if (pipe(verdict) != 0) std::exit(1);
  pid_t child = fork();
  if (child < 0) std::exit(1);
  if (child > 0) {
    close(verdict[1]);
    char status = 1;
    if (read(verdict[0], &status, 1) != 1) status = 1;  // the child died before reporting
    if (status == 0)
      fmt::print(stderr, "cused: serving {} in the background, pid {} (stop it with kill {})\n",
                 what, child, child);
    std::_Exit(status);
  }
  close(verdict[0]);
  report_fd_ = verdict[1];
  setsid();
}

void Background::ready() {
  if (report_fd_ < 0) return;
  int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    if (null > STDERR_FILENO) close(null);
  }
  [[maybe_unused]] auto chdir_result = chdir("/");
  char status = 0;
  [[maybe_unused]] auto written = write(report_fd_, &status, 1);
  close(report_fd_);
  report_fd_ = -1;
}

void Background::failed() {
  if (report_fd_ < 0) return;
  char status = 1;
  [[maybe_unused]] auto written = write(report_fd_, &status, 1);
  close(report_fd_);
  report_fd_ = -1;
}

}  // namespace cused
