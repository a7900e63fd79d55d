// Where cused deliberately differs from the kernel's driver (docs/binderfs.md lists each case
// with its spec id), a test that runs against both asks this and skips the kernel-only check
// with a message, rather than asserting something cused cannot do from userspace.
#pragma once

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

}  // namespace cused::client

// In a gtest body: skip the rest of the test on cused, naming the spec rule it cannot enforce.
#define CUSED_SKIP_WHERE_CUSED_DIFFERS(path, spec_id)                                     \
  do {                                                                                    \
    if (::cused::client::served_by_cused(path))                                           \
      GTEST_SKIP() << "cused deliberately differs here (" spec_id "): see docs/binderfs.md"; \
  } while (0)
