// SPDX-License-Identifier: GPL-2.0-only
// Where cused deliberately differs from the kernel's driver (docs/binderfs.md lists each case
// with its spec id), a test that runs against both asks this and skips the kernel-only check
// with a message, rather than asserting something cused cannot do from userspace.
#pragma once

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace cused::client {

// True when `path` is served by FUSE (cused's binderfs), false on the kernel's binderfs or
// /dev/binder.
inline bool served_by_cused(const std::string& path) {
  constexpr long kFuseSuperMagic = 0x65735546;
  struct statfs fs {};
  return statfs(path.c_str(), &fs) == 0 && fs.f_type == kFuseSuperMagic;
}

// True when `path` is a CUSE character device (cused's --cuse node): the kernel files every CUSE
// device under the "cuse" class, so its /sys/dev/char entry resolves into .../virtual/cuse/.
inline bool served_by_cuse(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return false;
  std::error_code error;
  auto device = std::filesystem::canonical("/sys/dev/char/" + std::to_string(major(st.st_rdev)) +
                                               ":" + std::to_string(minor(st.st_rdev)),
                                           error);
  return !error && device.parent_path().filename() == "cuse";
}

// True in a program started by `cused run` (it sets CUSED_RUN): its binder ioctls reach the daemon
// with their raw arguments through seccomp, and fds can travel (docs/run.md).
inline bool under_cused_run() { return std::getenv("CUSED_RUN") != nullptr; }

// True when the cused LD_PRELOAD shim (client/preload) is loaded in this process: it gives
// FUSE-path ioctls whose argument the kernel never reads the kernel's answer (docs/cuse.md).
inline bool preload_shim_loaded() { return dlsym(RTLD_DEFAULT, "cused_preload_active") != nullptr; }

// Whether an ioctl on `path` whose argument binder never reads (BINDER_THREAD_EXIT,
// BINDER_SET_CONTEXT_MGR) may pass NULL: everywhere but on cused's FUSE path without the shim,
// where the kernel's FUSE copies _IOC_SIZE bytes from it first and fails with EFAULT
// (docs/binderfs.md, differences).
inline bool null_ioctl_argument_reaches_driver(const std::string& path) {
  return !served_by_cused(path) || preload_shim_loaded() || under_cused_run();
}

// Whether fds in transactions reach the driver on `path`: everywhere but on cused's FUSE and CUSE
// paths, which cannot reach another process's descriptor tables and refuse every fd with EPERM
// (docs/binderfs.md); `cused run` passes them.
inline bool fds_travel(const std::string& path) {
  return !(served_by_cused(path) || served_by_cuse(path)) || under_cused_run();
}

}  // namespace cused::client

// In a gtest body: skip the rest of the test on cused, naming the spec rule it cannot enforce.
#define CUSED_SKIP_WHERE_CUSED_DIFFERS(path, spec_id)                                        \
  do {                                                                                       \
    if (::cused::client::served_by_cused(path))                                              \
      GTEST_SKIP() << "cused deliberately differs here (" spec_id "): see docs/binderfs.md"; \
  } while (0)

// In a gtest body: skip a test that means nothing where every fd is refused (it would pass
// whether or not the rule it checks is enforced), so that it counts as skipped, not passed.
#define CUSED_SKIP_WITHOUT_FD_PASSING(path)                                                   \
  do {                                                                                        \
    if (!::cused::client::fds_travel(path))                                                   \
      GTEST_SKIP() << "cused's FUSE and CUSE paths refuse every fd (EPERM): fds travel only " \
                      "under cused run (docs/binderfs.md)";                                   \
  } while (0)
