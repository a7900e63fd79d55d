// SPDX-License-Identifier: GPL-2.0-only
#include "tests/integration/mounted_binderfs.h"

#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/device_variant.h"
#include "core/driver.h"
#include "core/proc.h"
#include "core/thread.h"
#include "cused/host/kernel_design_loader.h"
#include "cused/host/thread_timer.h"

namespace cused::testing {

std::vector<std::string> mounts_under(const std::string& prefix) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::vector<std::string> found;
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mountpoint;
    fields >> id >> parent >> devno >> root >> mountpoint;
    if (mountpoint == prefix || mountpoint.rfind(prefix + "/", 0) == 0) found.push_back(mountpoint);
  }
  return found;
}

bool is_mounted(const std::string& dir) {
  for (const auto& mountpoint : mounts_under(dir))
    if (mountpoint == dir) return true;
  return false;
}

std::string make_temp_dir(const char* prefix) {
  std::string pattern = std::string("/tmp/") + prefix + "XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

namespace {

// `options` with CUSED_VARIANT applied over the test's own default, as the daemon takes it for
// --variant: tests/designs/run puts a design under the suites with it, and those whose client
// talks to an in-process mount (servicemanager, binder-throughput) must serve that design too.
devices::RegistryOptions with_environment_variant(devices::RegistryOptions options) {
  const char* spec = std::getenv("CUSED_VARIANT");
  if (spec == nullptr || *spec == '\0') return options;
  host::enable_kernel_designs();  // alloc_lock=kernel:TREE, as the daemon accepts it
  auto parsed = core::parse_device_variant(spec, options.default_variant);
  if (const auto* error = std::get_if<core::VariantSpecError>(&parsed))
    throw std::runtime_error(fmt::format("CUSED_VARIANT={}: {}", spec, error->message));
  options.default_variant = std::get<core::DeviceOptions>(parsed);
  return options;
}

// A registry whose devices are on the default Driver, given the process's timer first, as the
// daemon's main() gives it before any device is made.
std::unique_ptr<devices::DeviceRegistry> registry_with_timer(devices::RegistryOptions options) {
  core::Driver::shared_default()->set_timer(host::ThreadTimer::shared());
  return std::make_unique<devices::DeviceRegistry>(with_environment_variant(std::move(options)));
}

}  // namespace

MountedBinderfs::MountedBinderfs(binderfs::FilesystemOptions options,
                                 binderfs::MountOptions mount_options,
                                 devices::RegistryOptions registry_options)
    : dir_(make_temp_dir("cused-test-")),
      registry_(registry_with_timer(std::move(registry_options))),
      filesystem_(std::make_unique<binderfs::Filesystem>(*registry_, std::move(options))) {
  mount_options.mountpoint = dir_;
  mount_ = std::make_unique<binderfs::Mount>(*filesystem_, mount_options);
  mount_->serve_in_background();
  watchdog_ = std::thread([this] { watch(std::chrono::seconds(60)); });
}

MountedBinderfs::~MountedBinderfs() {
  {
    std::lock_guard guard(watchdog_lock_);
    finished_ = true;
  }
  watchdog_wake_.notify_one();
  watchdog_.join();
  mount_.reset();
  rmdir(dir_.c_str());
}

void MountedBinderfs::watch(std::chrono::seconds limit) {
  std::unique_lock guard(watchdog_lock_);
  if (watchdog_wake_.wait_for(guard, limit, [this] { return finished_; })) return;
  struct stat st;
  // The root's attributes are cached, so this stat does not call into the hung daemon.
  if (stat(dir_.c_str(), &st) == 0) {
    mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, nullptr);
    std::ofstream(fmt::format("/sys/fs/fuse/connections/{}/abort", minor(st.st_dev))) << "1";
  }
  std::fprintf(stderr, "watchdog: the test hung for %llds; FUSE connection aborted\n",
               static_cast<long long>(limit.count()));
  std::abort();
}

bool MountedBinderfs::wait_for_open_procs(std::size_t count, int timeout_ms) const {
  const core::Driver& driver = *core::Driver::shared_default();
  return wait_until(
      [&] { return registry_->open_procs() == count && driver.proc_count() == count; },
      std::chrono::milliseconds(timeout_ms));
}

bool MountedBinderfs::wait_for_parked_read(pid_t pid, pid_t tid, int timeout_ms) const {
  auto parked = [&] {
    bool found = false;
    registry_->for_each_proc_of(pid, [&](core::Proc& proc) {
      found = found || (proc.thread_looper(tid).value_or(0) & core::kLooperWaiting) != 0;
    });
    return found;
  };
  return wait_until(parked, std::chrono::milliseconds(timeout_ms));
}

}  // namespace cused::testing
