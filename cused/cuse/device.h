// SPDX-License-Identifier: GPL-2.0-only
// One binder device served as a CUSE character device, /dev/NAME: the CUSE operations that put a
// core::Device behind it. The CUSE counterpart of binderfs::Filesystem, with the same core, the
// same completions and interrupt delivery; what differs is the kernel interface:
//
// * ioctls are unrestricted: CUSE passes the caller's argument address and cused copies the
//   argument in and out itself with UserMemory (process_vm_readv/writev), rather than asking
//   the kernel to fetch it with an ioctl retry, which would cost one more round trip through the
//   kernel and the daemon for every ioctl (docs/cuse.md);
// * there is no mmap: the shim (client/preload) maps the open's memfd, see ShimMapping;
// * there is no flush: CUSE does not forward close() of one of several descriptors (S1.8);
// * the node answers cused's control ioctls itself (uapi/cused.h: variant, shrink, trace) for
//   root and the daemon's user, as binder-control does on a mount (docs/cuse.md).
//
// The device and its open procs are in the daemon's DeviceRegistry, with binderfs's.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/device.h"
#include "core/proc.h"
#include "core/sync/mutex.h"
#include "cused/cuse/cuse.h"
#include "cused/cuse/shim_mapping.h"
#include "cused/devices/device_registry.h"
#include "cused/request/interrupt_worker.h"
#include "cused/thread_groups.h"

namespace cused::cuse {

class Device {
 public:
  // Serves `device` of `registry`, which records the procs opened on it; both must outlive this.
  Device(devices::DeviceRegistry& registry, std::shared_ptr<core::Device> device);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  static const cuse_lowlevel_ops& operations();
  const std::string& name() const { return device_->name(); }

  // The shim's map request names an open by the token CUSED_CUSE_GET_MAP_TOKEN gave it.
  std::shared_ptr<ShimMapping> mapping_of(std::uint64_t token) const CUSED_EXCLUDES(lock_);
  // Releases every file still open (S1.9); called while the CUSE session still exists, since a
  // release may notify poll handles that belong to it.
  void release_all() CUSED_EXCLUDES(lock_);

  // CUSE operations (called through operations()).
  void open(fuse_req_t req, fuse_file_info* fi) CUSED_EXCLUDES(lock_);
  void release(fuse_req_t req, fuse_file_info* fi) CUSED_EXCLUDES(lock_);
  void ioctl(fuse_req_t req, unsigned cmd, std::uint64_t arg, fuse_file_info* fi);
  void poll(fuse_req_t req, fuse_file_info* fi, fuse_pollhandle* ph);

 private:
  struct OpenFile {
    OpenFile(std::shared_ptr<core::Proc> proc, bool nonblock, std::shared_ptr<ShimMapping> mapping)
        : proc(std::move(proc)), nonblock(nonblock), mapping(std::move(mapping)) {}
    std::shared_ptr<core::Proc> proc;
    std::uint64_t token = 0;
    bool nonblock;  // O_NONBLOCK at open (CUSE does not forward later fcntl changes either)
    std::shared_ptr<ShimMapping> mapping;
    ThreadGroups thread_groups;
  };

  std::uint64_t new_token() const CUSED_REQUIRES(lock_);
  void binder_ioctl(fuse_req_t req, OpenFile& file, unsigned cmd, std::uint64_t arg);
  void token_ioctl(fuse_req_t req, const OpenFile& file, std::uint64_t arg);
  void control_ioctl(fuse_req_t req, unsigned cmd, std::uint64_t arg);

  devices::DeviceRegistry& registry_;
  const std::shared_ptr<core::Device> device_;
  InterruptWorker interrupts_;
  mutable sync::Mutex lock_;  // guards the open files
  std::map<const OpenFile*, std::unique_ptr<OpenFile>> open_files_ CUSED_GUARDED_BY(lock_);
  std::unordered_map<std::uint64_t, std::shared_ptr<ShimMapping>> by_token_ CUSED_GUARDED_BY(lock_);
};

}  // namespace cused::cuse
