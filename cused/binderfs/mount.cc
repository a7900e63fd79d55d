// SPDX-License-Identifier: GPL-2.0-only
#include "cused/binderfs/mount.h"

#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace cused::binderfs {

namespace {

// Ring entries per queue (one queue per CPU). A parked binder read holds its entry until work
// arrives; when every entry of a queue is parked, the next request from that CPU (possibly the
// one that would wake them) waits in the kernel forever. So the depth must exceed the number of
// binder threads that can sit in a read at once: libbinder pools are 16 threads per process,
// so 1024 covers 64 such processes per CPU. With max_write capped (Filesystem's init), an entry
// costs two pages of address space, touched only when used.
constexpr unsigned kDefaultUringDepth = 1024;

// The device number of the mount at `canonical_path`, from /proc/self/mountinfo (the last,
// topmost entry).
dev_t mounted_device(const std::string& canonical_path) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  dev_t found = 0;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mountpoint;
    fields >> id >> parent >> devno >> root >> mountpoint;
    unsigned major = 0, minor = 0;
    if (mountpoint == canonical_path && std::sscanf(devno.c_str(), "%u:%u", &major, &minor) == 2)
      found = makedev(major, minor);
  }
  return found;
}

}  // namespace

bool clean_stale_mount(const std::string& path) {
  // The root's attributes may still be cached after the daemon died, but a lookup of a name that
  // does not exist always reaches the daemon: a dead one answers ENOTCONN.
  struct stat st;
  std::string probe = path + "/.cused-liveness-probe";
  if (stat(probe.c_str(), &st) == 0 || errno != ENOTCONN) return false;
  return umount2(path.c_str(), MNT_DETACH) == 0;
}

Mount::Mount(Filesystem& filesystem, MountOptions options)
    : filesystem_(filesystem), options_(std::move(options)) {
  if (clean_stale_mount(options_.mountpoint))
    fuse_log(FUSE_LOG_WARNING, "cused: removed a stale mount at %s (its daemon had died)\n",
             options_.mountpoint.c_str());
  // Resolved now: once mounted, resolving it would call into our own, not yet served, mount.
  std::error_code error;
  std::string canonical = std::filesystem::canonical(options_.mountpoint, error).string();
  if (error)
    throw std::runtime_error(
        fmt::format("cused: mount point {}: {}", options_.mountpoint, error.message()));
  std::vector<std::string> words{"cused", "-o", "fsname=cused,subtype=binder,default_permissions"};
  if (options_.allow_other) words.insert(words.end(), {"-o", "allow_other"});
  if (options_.io_uring) {
    unsigned depth = options_.io_uring_depth ? options_.io_uring_depth : kDefaultUringDepth;
    words.insert(words.end(), {"-o", fmt::format("io_uring,io_uring_q_depth={}", depth)});
  }
  if (options_.debug) words.push_back("-d");
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  session_ =
      fuse_session_new(&args, &Filesystem::operations(), sizeof(fuse_lowlevel_ops), &filesystem);
  fuse_opt_free_args(&args);
  if (!session_) throw std::runtime_error("cused: could not create the FUSE session");
  if (fuse_session_mount(session_, options_.mountpoint.c_str()) != 0) {
    fuse_session_destroy(session_);
    throw std::runtime_error(fmt::format(
        "cused: cannot mount at {} (needs root or CAP_SYS_ADMIN, an existing directory, and "
        "/dev/fuse)",
        options_.mountpoint));
  }
  mounted_ = true;
  // Not stat(): the daemon must not call into its own mount before it serves requests.
  filesystem.set_mount_device(mounted_device(canonical));
}

Mount::~Mount() {
  stop();
  if (background_.joinable()) background_.join();
  // Files the kernel has not released yet hold poll handles of this session: release them
  // while the session exists.
  filesystem_.release_all();
  if (mounted_) fuse_session_unmount(session_);
  fuse_session_destroy(session_);
}

int Mount::serve() {
  fuse_loop_config* config = fuse_loop_cfg_create();
  if (options_.max_threads) fuse_loop_cfg_set_max_threads(config, options_.max_threads);
  int result = fuse_session_loop_mt(session_, config);
  // A signal's handler ended the loop, which has freed the rings: no reply may go there now.
  filesystem_.close_uring_replies();
  fuse_loop_cfg_destroy(config);
  return result;
}

void Mount::serve_in_background() {
  background_ = std::thread([this] { serve(); });
}

void Mount::stop() {
  if (!session_ || fuse_session_exited(session_)) return;
  // Before the loop can end and free the io_uring rings: from here on no reply goes there.
  filesystem_.close_uring_replies();
  // Ends the loop: its main thread wakes and cancels the workers, which libfuse lets be cancelled
  // only inside their read of /dev/fuse. The device stays open until the destructor unmounts,
  // after the loop is gone: closing it under a worker's read (or a reply's write) would let the
  // descriptor number be reused under them.
  fuse_session_exit(session_);
}

}  // namespace cused::binderfs
