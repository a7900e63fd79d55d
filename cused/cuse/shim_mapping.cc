// SPDX-License-Identifier: GPL-2.0-only
#include "cused/cuse/shim_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "core/version.h"
#include "cused/fuse/fuse.h"

namespace cused::cuse {

namespace {

int reopen_readonly(int fd) {
  // A new open file description of the same memfd, read-only: mmap(PROT_WRITE, MAP_SHARED) and
  // mprotect(PROT_WRITE) of it fail in the client's kernel, whatever the shim does.
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  int readonly = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (readonly < 0)
    throw std::system_error(errno, std::generic_category(), "reopen memfd read-only");
  return readonly;
}

}  // namespace

ShimMapping::ShimMapping(pid_t owner, int memfd)
    : owner_(owner), readonly_fd_(reopen_readonly(memfd)) {}

ShimMapping::~ShimMapping() { close(readonly_fd_); }

int ShimMapping::begin(pid_t peer, unsigned prot) {
  // binder_mmap's order of checks: the caller, then the flags, then "already mapped" (S1.4).
  if (peer != owner_) return EINVAL;
  if (prot & PROT_WRITE) return EPERM;
  sync::LockGuard guard(lock_);
  if (state_ != State::kUnmapped) return EBUSY;
  state_ = State::kMapping;
  return 0;
}

void ShimMapping::commit(const core::ClientMapping& mapping) {
  sync::LockGuard guard(lock_);
  mapping_ = mapping;
  state_ = State::kMapped;
}

void ShimMapping::abort() {
  sync::LockGuard guard(lock_);
  if (state_ == State::kMapping) state_ = State::kUnmapped;
}

std::optional<core::ClientMapping> ShimMapping::mapping() const {
  sync::LockGuard guard(lock_);
  if (state_ != State::kMapped) return std::nullopt;
  return mapping_;
}

std::optional<core::ClientMapping> ShimMappingFinder::find() {
  auto mapping = mapping_->mapping();
  if (!mapping && !hinted_.exchange(true, std::memory_order_relaxed))
    fuse_log(FUSE_LOG_WARNING,
             "cused: process %d uses /dev/%s without a mapping. CUSE has no mmap: a plain mmap "
             "of the node fails with ENODEV; run the client with "
             "LD_PRELOAD=libcused-preload.so (" CUSED_DOC_DIR "/cuse.md)\n",
             static_cast<int>(mapping_->owner()), device_name_.c_str());
  return mapping;
}

}  // namespace cused::cuse
