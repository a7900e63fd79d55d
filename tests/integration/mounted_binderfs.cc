#include "tests/integration/mounted_binderfs.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace cused::testing {

std::string make_temp_dir(const char* prefix) {
  std::string pattern = std::string("/tmp/") + prefix + "XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

MountedBinderfs::MountedBinderfs(binderfs::FilesystemOptions options)
    : dir_(make_temp_dir("cused-test-")),
      filesystem_(std::make_unique<binderfs::Filesystem>(std::move(options))) {
  binderfs::MountOptions mount_options;
  mount_options.mountpoint = dir_;
  mount_ = std::make_unique<binderfs::Mount>(*filesystem_, mount_options);
  mount_->serve_in_background();
}

MountedBinderfs::~MountedBinderfs() {
  mount_.reset();
  rmdir(dir_.c_str());
}

bool MountedBinderfs::wait_for_open_procs(std::size_t count, int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (filesystem_->open_procs() != count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace cused::testing
