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
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/alloc/page_lru.h"
#include "core/device.h"
#include "core/sync/mutex.h"
#include "cused/binderfs/logs_dir.h"
#include "cused/fuse/fuse.h"
#include "cused/fuse/uring_requests.h"
#include "cused/host/trace_recorder.h"
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
  std::vector<std::string> devices{"binder", "hwbinder", "vndbinder"};
  // The variant of every device that is not given one in `variants` (`cused --variant`), also
  // the base a spec is applied to (docs/design.md section 5).
  core::DeviceOptions default_variant;
  std::map<std::string, core::DeviceOptions> variants;  // by device name (`--device NAME:SPEC`)
  // "Shrink now" for CUSED_CTL_SHRINK (the daemon's Shrinker); without it the ioctl is ENOTTY.
  std::function<core::alloc::ReclaimResult()> shrink_now;
  // The trace file CUSED_CTL_TRACE starts and stops (the daemon's); without it the ioctl is
  // ENOTTY.
  host::TraceRecorder* trace = nullptr;
  NodeAttributes device_attributes;
  std::size_t max_devices = 1u << 20;  // S10.1: binderfs's default and upper bound
};

class OpenFile;

class Filesystem {
 public:
  explicit Filesystem(FilesystemOptions options);
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

  // S10.3: what BINDER_CTL_ADD does; 0 or -errno (EEXIST, EACCES, ENOSPC).
  int add_device(const std::string& name, const core::DeviceOptions& variant);
  std::vector<std::string> device_names() const;
  // The device called `name`, or null.
  std::shared_ptr<core::Device> device(const std::string& name) const;
  // The mount's device number: the client's mapping of a device node shows up in
  // /proc/<pid>/maps under it and the node's inode (passthrough maps the memfd but reports the
  // FUSE file).
  void set_mount_device(dev_t dev) { mount_device_.store(dev, std::memory_order_relaxed); }
  // The device of the mount (stat of the mount point, and of every node in it).
  dev_t mount_device() const { return mount_device_.load(std::memory_order_relaxed); }
  // The proc of the open made on inode `ino` (what stat() of a client's descriptor of a device
  // node shows: each open has an inode of its own), and its O_NONBLOCK; null if none is open.
  struct NodeOpen {
    std::shared_ptr<core::Proc> proc;
    bool nonblock = false;
  };
  NodeOpen open_of_inode(fuse_ino_t ino) const;
  // The procs thread group `tgid` has open on this mount's nodes (`cused run` closes their
  // mappings when it sees the process unmap them).
  std::vector<std::shared_ptr<core::Proc>> procs_of(pid_t tgid) const;
  // Called whenever a descriptor of a device node is closed (FUSE flush and release) with that
  // open's proc: the `cused run` frontend forgets which descriptor named which proc. Set before
  // the mount serves.
  void set_close_observer(std::function<void(const core::Proc&)> observer) {
    close_observer_ = std::move(observer);
  }
  // Client threads whose exit is being watched (tests).
  std::size_t watched_threads() const { return thread_exits_.watched(); }
  // ioctls that arrived over FUSE io_uring rather than /dev/fuse reads (proof of the mode).
  std::uint64_t uring_ioctls() const { return uring_ioctls_.load(std::memory_order_relaxed); }
  // Open device files (procs) right now; for tests, stats and leak checks.
  std::size_t open_procs() const;
  // Calls `visit` for every open proc of thread group `pid` (tests poke at a proc's memfd).
  void for_each_proc_of(pid_t pid, const std::function<void(core::Proc&)>& visit) const;

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
  struct DeviceEntry {
    std::string name;
    std::shared_ptr<core::Device> device;
    fuse_ino_t listing_ino;  // the inode readdir shows; lookups hand out fresh ones
    bool unlinked = false;   // S10.4: gone from the namespace, alive for its open procs
  };
  struct DeviceInode {
    std::size_t device_index;
    std::uint64_t lookups;
  };
  enum class Kind { kRoot, kControl, kFeaturesDir, kFeature, kDevice, kLogs, kNone };
  std::vector<std::string_view> feature_names() const;
  struct Resolved {
    Kind kind = Kind::kNone;
    std::size_t index = 0;  // feature or device index
  };

  Resolved resolve(fuse_ino_t ino) const;
  bool fill_attr(fuse_ino_t ino, struct stat& st) const;
  fuse_ino_t new_device_inode(std::size_t device_index);
  void open_device(fuse_req_t req, fuse_ino_t ino, std::size_t device_index, fuse_file_info* fi);
  // binder-control (control_ioctls.cc): BINDER_CTL_ADD and cused's own uapi/cused.h.
  void control_ioctl(fuse_req_t req, unsigned cmd, const void* in, std::size_t in_size);
  void add_device_ioctl(fuse_req_t req, const void* in, std::size_t in_size);
  void get_variant_ioctl(fuse_req_t req, const void* in, std::size_t in_size);
  void set_variant_ioctl(fuse_req_t req, const void* in, std::size_t in_size);
  void shrink_ioctl(fuse_req_t req);
  void trace_ioctl(fuse_req_t req, const void* in, std::size_t in_size);
  // The device named `name` in the root, if there is one.
  std::optional<std::size_t> find_device(const std::string& name) const CUSED_REQUIRES(lock_);
  std::vector<std::shared_ptr<core::Device>> live_devices() const;
  int rename_device(const std::string& from, const std::string& to, unsigned flags);

  const FilesystemOptions options_;
  InterruptWorker interrupts_;
  fuse::UringRequests uring_requests_;
  // S2.6 without the ioctl: FUSE refuses BINDER_THREAD_EXIT's NULL argument
  // (thread_exit_watcher.h).
  ThreadExitWatcher thread_exits_;
  std::atomic<dev_t> mount_device_{0};
  std::atomic<std::uint64_t> uring_ioctls_{0};

  mutable sync::Mutex lock_;  // guards the namespace: devices, inodes, open files
  std::vector<DeviceEntry> devices_ CUSED_GUARDED_BY(lock_);
  std::map<fuse_ino_t, DeviceInode> device_inodes_ CUSED_GUARDED_BY(lock_);
  fuse_ino_t next_device_ino_ CUSED_GUARDED_BY(lock_);
  std::map<const OpenFile*, std::unique_ptr<OpenFile>> open_files_ CUSED_GUARDED_BY(lock_);
  std::unordered_map<fuse_ino_t, const OpenFile*> opens_by_inode_ CUSED_GUARDED_BY(lock_);
  std::function<void(const core::Proc&)> close_observer_;
  LogsDir logs_;
};

}  // namespace cused::binderfs
