// SPDX-License-Identifier: GPL-2.0-only
// A cused binderfs mounted in-process on a temporary directory, served on background threads, so
// that a test can be the client (its own threads, or forked children) and still reach the
// daemon's side (a proc's memfd) directly.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cused/binderfs/filesystem.h"
#include "cused/binderfs/mount.h"
#include "cused/devices/device_registry.h"

namespace cused::testing {

class MountedBinderfs {
 public:
  explicit MountedBinderfs(binderfs::FilesystemOptions options = {},
                           binderfs::MountOptions mount_options = {},
                           devices::RegistryOptions registry_options = {});
  ~MountedBinderfs();

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  binderfs::Filesystem& filesystem() { return *filesystem_; }
  // The devices and open procs the mount serves.
  devices::DeviceRegistry& registry() { return *registry_; }
  // Waits (bounded) until the daemon holds `count` open procs and the driver (binder_logs) no
  // other; true if it got there. FUSE sends RELEASE after close() has returned, and the daemon
  // drops the open file before the proc's release takes the proc out of the driver, so both
  // counts are awaited.
  bool wait_for_open_procs(std::size_t count, int timeout_ms = 10000) const;
  // Waits (bounded) until thread `tid` of process `pid` has a read parked in the driver: only
  // then is it inside the ioctl, where a signal ends it with EINTR (S1.12) and a flush or a kill
  // finds it parked. A signal that comes earlier runs its handler in user space, and the read
  // then parks for good.
  bool wait_for_parked_read(pid_t pid, pid_t tid, int timeout_ms = 10000) const;

 private:
  // A test process that is its own FUSE daemon cannot be killed while a thread waits on the
  // mount (exit waits for the thread, the thread for the daemon, which is exiting). So a hung
  // test is ended from inside: abort the FUSE connection, which fails every waiting request,
  // then abort the process.
  void watch(std::chrono::seconds limit);

  std::string dir_;
  std::unique_ptr<devices::DeviceRegistry> registry_;
  std::unique_ptr<binderfs::Filesystem> filesystem_;
  std::unique_ptr<binderfs::Mount> mount_;
  std::mutex watchdog_lock_;
  std::condition_variable watchdog_wake_;
  bool finished_ = false;  // guarded by watchdog_lock_
  std::thread watchdog_;
};

// The mount points in /proc/self/mountinfo that are `prefix` or lie under it.
std::vector<std::string> mounts_under(const std::string& prefix);
// Whether `dir` is a mount point (in /proc/self/mountinfo).
bool is_mounted(const std::string& dir);

// Makes a fresh temporary directory and returns its path.
std::string make_temp_dir(const char* prefix);

// Polls `condition` until it holds (true) or `timeout` has passed (false).
bool wait_until(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace cused::testing
