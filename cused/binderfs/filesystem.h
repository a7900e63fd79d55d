// SPDX-License-Identifier: GPL-2.0-only
// The binderfs look-alike served over FUSE (S10): the root with one node per binder device,
// `binder-control`, `features/` and `binder_logs/` (logs_dir.h). Devices can be unlinked and
// renamed (S10.4); binder-control cannot. Device nodes are regular files to FUSE (a character
// device inode would be opened by the kernel's own driver, not by us); everything else behaves as
// binderfs does.
//
// Every open of a device node creates a core proc with its own memfd, registered as the file's
// FUSE passthrough backing file, so the client's mmap maps that memfd (docs/design.md section 2).
// Passthrough allows one backing file per inode, so every LOOKUP of a device returns a fresh
// inode with entry timeout 0: each opener gets an inode of its own.
//
// The devices, their variants and their open procs are the daemon's DeviceRegistry
// (cused/devices/device_registry.h), which the CUSE frontend and `cused run` use too; this class
// is the FUSE adapter over it: the namespace as FUSE sees it (inodes, lookups, the reserved
// names), the open files' FUSE handles, and the requests.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.h"
#include "core/sync/mutex.h"
#include "cused/binderfs/logs_dir.h"
#include "cused/devices/device_registry.h"
#include "cused/fuse/fuse.h"
#include "cused/fuse/uring_requests.h"
#include "cused/request/interrupt_worker.h"
#include "cused/thread_exit_watcher.h"

namespace cused::binderfs {

// Owner and permissions of a device node (binderfs: root, 0600).
struct NodeAttributes {
  mode_t mode = 0600;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct FilesystemOptions {
  // The devices the mount starts with, made in the registry. Those not given a variant in
  // `variants` (`cused --device NAME:SPEC`) get the registry's default (`cused --variant`).
  std::vector<std::string> devices{"binder", "hwbinder", "vndbinder"};
  std::map<std::string, core::DeviceOptions> variants;  // by device name
  NodeAttributes device_attributes;
};

class OpenFile;

class Filesystem {
 public:
  // Creates options.devices in `registry`, which must outlive the Filesystem. Throws
  // std::system_error when one cannot be made (a name taken, or not valid).
  Filesystem(devices::DeviceRegistry& registry, FilesystemOptions options);
  ~Filesystem();
  Filesystem(const Filesystem&) = delete;
  Filesystem& operator=(const Filesystem&) = delete;

  static const fuse_lowlevel_ops& operations();

  // Releases every file still open (S1.9), as the kernel's releases would. Mount calls it when
  // the session has stopped but still exists: a release may notify poll handles, which belong to
  // the session.
  void release_all();
  // Mount calls this as the session ends, before libfuse frees the io_uring ring buffers (or
  // right after, when a signal ended the loop): later answers to io_uring requests are dropped,
  // not written into freed memory; the kernel ends those requests with the connection.
  void close_uring_replies() { uring_requests_.close(); }

  // S10.3: what BINDER_CTL_ADD does; 0 or -errno (EEXIST, EACCES, ENOSPC). The names of the
  // root's other entries are taken (EEXIST).
  int add_device(const std::string& name, const core::DeviceOptions& variant);
  // The devices in the root.
  std::vector<std::string> device_names() const;
  devices::DeviceRegistry& registry() const { return registry_; }
  // The mount's device number: the client's mapping of a device node shows up in
  // /proc/<pid>/maps under it and the node's inode (passthrough maps the memfd but reports the
  // FUSE file).
  void set_mount_device(dev_t dev) { mount_device_.store(dev, std::memory_order_relaxed); }
  // The device of the mount (stat of the mount point, and of every node in it).
  dev_t mount_device() const { return mount_device_.load(std::memory_order_relaxed); }
  // Client threads whose exit is being watched (tests).
  std::size_t watched_threads() const { return thread_exits_.watched(); }
  // ioctls that arrived over FUSE io_uring rather than /dev/fuse reads (proof of the mode).
  std::uint64_t uring_ioctls() const { return uring_ioctls_.load(std::memory_order_relaxed); }

  // FUSE operations (called through operations()).
  void lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
  void forget(fuse_ino_t ino, std::uint64_t nlookup);
  void getattr(fuse_req_t req, fuse_ino_t ino);
  void readdir(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t offset);
  void open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  void read(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t offset, fuse_file_info* fi);
  void flush(fuse_req_t req, fuse_file_info* fi);
  void release(fuse_req_t req, fuse_file_info* fi);
  // `arg`: the caller's argument address (traced only: FUSE copied the argument in already).
  void ioctl(fuse_req_t req, unsigned cmd, std::uint64_t arg, fuse_file_info* fi, const void* in,
             std::size_t in_size, std::size_t out_size);
  void poll(fuse_req_t req, fuse_file_info* fi, fuse_pollhandle* ph);
  // S10.4: a device lives on for the procs that have it open.
  void unlink(fuse_req_t req, fuse_ino_t parent, const char* name);
  void rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned flags);
  LogsDir& logs() { return logs_; }

 private:
  // An inode handed out by a LOOKUP of a device (readdir shows a listing inode made from the
  // device's id instead).
  struct DeviceInode {
    devices::DeviceId device;
    std::uint64_t lookups;
  };
  enum class Kind { kRoot, kControl, kFeaturesDir, kFeature, kDevice, kLogs, kNone };
  std::vector<std::string_view> feature_names() const;
  struct Resolved {
    Kind kind = Kind::kNone;
    std::size_t index = 0;  // feature index or device id
  };

  Resolved resolve(fuse_ino_t ino) const;
  bool fill_attr(fuse_ino_t ino, struct stat& st) const;
  fuse_ino_t new_device_inode(devices::DeviceId device);
  void open_device(fuse_req_t req, fuse_ino_t ino, devices::DeviceId id, fuse_file_info* fi);
  // binder-control (control_ioctls.cc): BINDER_CTL_ADD, and cused's own uapi/cused.h served by
  // the registry.
  void control_ioctl(fuse_req_t req, unsigned cmd, const void* in, std::size_t in_size);
  void add_device_ioctl(fuse_req_t req, const void* in, std::size_t in_size);
  // add_device, with the new device's id.
  devices::DeviceRegistry::Added create_device(const std::string& name,
                                               const core::DeviceOptions& variant);
  int rename_device(const std::string& from, const std::string& to, unsigned flags);

  devices::DeviceRegistry& registry_;
  const FilesystemOptions options_;
  InterruptWorker interrupts_;
  fuse::UringRequests uring_requests_;
  // S2.6 without the ioctl: FUSE refuses BINDER_THREAD_EXIT's NULL argument
  // (thread_exit_watcher.h).
  ThreadExitWatcher thread_exits_;
  std::atomic<dev_t> mount_device_{0};
  std::atomic<std::uint64_t> uring_ioctls_{0};

  mutable sync::Mutex lock_;  // guards the inodes of lookups and the open files' handles
  std::map<fuse_ino_t, DeviceInode> device_inodes_ CUSED_GUARDED_BY(lock_);
  fuse_ino_t next_device_ino_ CUSED_GUARDED_BY(lock_);
  std::map<const OpenFile*, std::unique_ptr<OpenFile>> open_files_ CUSED_GUARDED_BY(lock_);
  LogsDir logs_;
};

}  // namespace cused::binderfs
