// Where cused deliberately differs from the kernel's driver (docs/binderfs.md lists each case
// with its spec id), a test that runs against both asks this and skips the kernel-only check
// with a message, rather than asserting something cused cannot do from userspace.
#pragma once

#include <dlfcn.h>
#include <sys/vfs.h>

#include <string>

namespace cused::client {

// True when `path` is served by FUSE (cused's binderfs), false on the kernel's binderfs or
// /dev/binder.
inline bool served_by_cused(const std::string& path) {
  constexpr long kFuseSuperMagic = 0x65735546;
  struct statfs fs {};
  return statfs(path.c_str(), &fs) == 0 && fs.f_type == kFuseSuperMagic;
}

// True when the cused LD_PRELOAD shim (client/preload) is loaded in this process: it gives
// FUSE-path ioctls whose argument the kernel never reads the kernel's answer (docs/cuse.md).
inline bool preload_shim_loaded() { return dlsym(RTLD_DEFAULT, "cused_preload_active") != nullptr; }

// Whether an ioctl on `path` whose argument binder never reads (BINDER_THREAD_EXIT,
// BINDER_SET_CONTEXT_MGR) may pass NULL: everywhere but on cused's FUSE path without the shim,
// where the kernel's FUSE copies _IOC_SIZE bytes from it first and fails with EFAULT
// (docs/binderfs.md, differences).
inline bool null_ioctl_argument_reaches_driver(const std::string& path) {
  return !served_by_cused(path) || preload_shim_loaded();
}

}  // namespace cused::client

// In a gtest body: skip the rest of the test on cused, naming the spec rule it cannot enforce.
#define CUSED_SKIP_WHERE_CUSED_DIFFERS(path, spec_id)                                        \
  do {                                                                                       \
    if (::cused::client::served_by_cused(path))                                              \
      GTEST_SKIP() << "cused deliberately differs here (" spec_id "): see docs/binderfs.md"; \
  } while (0)
