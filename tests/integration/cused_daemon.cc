// SPDX-License-Identifier: GPL-2.0-only
#include "tests/integration/cused_daemon.h"

#include <signal.h>
#include <sys/mount.h>

#include <filesystem>
#include <utility>

#include "tests/integration/mounted_binderfs.h"

namespace cused::testing {

CusedDaemon::CusedDaemon(std::string dir, const std::vector<std::string>& extra_args,
                         const std::string& node, ToolProcess::Capture capture)
    : dir_(std::move(dir)) {
  std::vector<std::string> argv{binary_from_env("CUSED_BINARY"), "--mount", dir_, "--foreground"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  process_.emplace(argv, capture);
  serving_ = wait_until([&] { return std::filesystem::exists(dir_ + "/" + node); });
}

CusedDaemon::~CusedDaemon() {
  stop();
  remove_mount_point(dir_);
}

ToolProcess::Result CusedDaemon::stop(std::chrono::milliseconds limit) {
  if (!process_) return {};
  kill(process_->pid(), SIGTERM);
  auto result = process_->finish(limit);
  process_.reset();
  return result;
}

void remove_mount_point(const std::string& dir) {
  umount2(dir.c_str(), MNT_DETACH);
  std::filesystem::remove_all(dir);
}

}  // namespace cused::testing
