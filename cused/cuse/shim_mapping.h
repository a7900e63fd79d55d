// SPDX-License-Identifier: GPL-2.0-only
// One open's buffer mapping as the LD_PRELOAD shim made it (CUSE has no mmap, docs/cuse.md).
//
// The daemon keeps a read-only descriptor of the proc's memfd for the shim to map, and the
// address the shim reports back; core finds the mapping through ShimMappingFinder. The rules of
// binder_mmap are kept here (S1.4): only the opener maps (EINVAL), never writable (EPERM), once
// (EBUSY), and a failed mmap does not use the one mapping up.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "core/client_mapping.h"
#include "core/sync/mutex.h"

namespace cused::cuse {

class ShimMapping {
 public:
  // `memfd`: the proc's buffer file; reopened read-only, so that neither the shim's mapping nor a
  // later mprotect can be writable (the kernel clears VM_MAYWRITE the same way).
  // Throws std::system_error when the reopen fails.
  ShimMapping(pid_t owner, int memfd);
  ~ShimMapping();
  ShimMapping(const ShimMapping&) = delete;
  ShimMapping& operator=(const ShimMapping&) = delete;

  pid_t owner() const { return owner_; }
  int readonly_fd() const { return readonly_fd_; }

  // A map request from process `peer` (its SO_PEERCRED pid) with mmap's `prot`: 0, and the shim
  // may map readonly_fd(); or EINVAL (not the opener), EPERM (PROT_WRITE) or EBUSY (mapped, or
  // another mmap is under way), the errno the shim's mmap fails with.
  int begin(pid_t peer, unsigned prot) CUSED_EXCLUDES(lock_);
  // The outcome of a begun mmap: recorded (the proc counts as mapped from now on) or dropped.
  void commit(const core::ClientMapping& mapping) CUSED_EXCLUDES(lock_);
  void abort() CUSED_EXCLUDES(lock_);

  std::optional<core::ClientMapping> mapping() const CUSED_EXCLUDES(lock_);

 private:
  enum class State { kUnmapped, kMapping, kMapped };
  const pid_t owner_;
  const int readonly_fd_;
  mutable sync::Mutex lock_;
  State state_ CUSED_GUARDED_BY(lock_) = State::kUnmapped;
  core::ClientMapping mapping_ CUSED_GUARDED_BY(lock_);
};

// core's view of a ShimMapping. A proc that core needs mapped but that never went through the
// shim gets one line in the daemon's log saying how to map a CUSE node (its mmap failed with the
// kernel's ENODEV, which the daemon never sees).
class ShimMappingFinder final : public core::MappingFinder {
 public:
  ShimMappingFinder(std::shared_ptr<ShimMapping> mapping, std::string device_name)
      : mapping_(std::move(mapping)), device_name_(std::move(device_name)) {}
  std::optional<core::ClientMapping> find() override;

 private:
  const std::shared_ptr<ShimMapping> mapping_;
  const std::string device_name_;
  std::atomic<bool> hinted_{false};
};

}  // namespace cused::cuse
