// SPDX-License-Identifier: GPL-2.0-only
#include "cused/binderfs/filesystem.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

#include "core/buffer_file.h"
#include "core/proc.h"
#include "core/protocol_features.h"
#include "cused/binderfs/maps_finder.h"
#include "cused/binderfs/open_file.h"
#include "cused/fuse/ioctl_completion.h"
#include "cused/fuse/request.h"
#include "cused/opener.h"
#include "cused/own_closes.h"
#include "cused/request/caller_scheduling.h"
#include "uapi/binder.h"

namespace cused::binderfs {

namespace {

constexpr fuse_ino_t kRootIno = FUSE_ROOT_ID;
constexpr fuse_ino_t kControlIno = 2;  // binderfs gives binder-control inode 2 (S10.2)
constexpr fuse_ino_t kFeaturesIno = 3;
constexpr fuse_ino_t kFirstFeatureIno = 16;
constexpr fuse_ino_t kFirstListingIno = 1024;
// Inodes handed out by LOOKUP of a device name: one per lookup, never reused.
constexpr fuse_ino_t kFirstDeviceIno = fuse_ino_t{1} << 32;

constexpr const char* kControlName = "binder-control";
constexpr const char* kFeaturesName = "features";
constexpr std::string_view kFeatureContent = "1\n";
// The smallest request buffer the kernel accepts: FUSE over io_uring refuses ring entries
// smaller than FUSE_MIN_READ_BUFFER (8 KiB) or max_pages pages.
constexpr unsigned kMaxRequestPayload = 8192;

Filesystem& self(fuse_req_t req) { return *static_cast<Filesystem*>(fuse_req_userdata(req)); }
OpenFile& file_of(fuse_file_info* fi) { return *reinterpret_cast<OpenFile*>(fi->fh); }

// Names in the root that are not devices.
bool reserved_name(const std::string& name) {
  return name == kControlName || name == kFeaturesName || name == LogsDir::kName;
}

constexpr auto kBinderfs = devices::Frontend::kBinderfs;

}  // namespace

Filesystem::Filesystem(devices::DeviceRegistry& registry, FilesystemOptions options)
    : registry_(registry),
      options_(std::move(options)),
      next_device_ino_(kFirstDeviceIno),
      logs_(core::Driver::shared_default(), [&registry] { return registry.live_devices(); }) {
  for (const auto& name : options_.devices) {
    auto variant = options_.variants.find(name);
    if (int err = add_device(name, variant == options_.variants.end() ? registry_.default_variant()
                                                                      : variant->second);
        err != 0)
      throw std::system_error(-err, std::generic_category(), "device " + name);
  }
}

Filesystem::~Filesystem() { release_all(); }

void Filesystem::release_all() {
  std::map<const OpenFile*, std::unique_ptr<OpenFile>> files;
  {
    sync::LockGuard guard(lock_);
    files.swap(open_files_);
  }
  for (auto& [key, file] : files) {
    if (!file->proc()) continue;
    registry_.remove_open(*file->proc());
    file->proc()->release();
  }
}

int Filesystem::add_device(const std::string& name, const core::DeviceOptions& variant) {
  return create_device(name, variant).error;
}

devices::DeviceRegistry::Added Filesystem::create_device(const std::string& name,
                                                         const core::DeviceOptions& variant) {
  if (reserved_name(name)) return {.error = -EEXIST};
  return registry_.add_device(name, variant, kBinderfs);
}

std::vector<std::string> Filesystem::device_names() const {
  std::vector<std::string> names;
  for (auto& device : registry_.devices_of(kBinderfs)) names.push_back(std::move(device.name));
  return names;
}

// core's protocol features, and priority=android's when the mount's default variant has it (its
// inode last, so the others keep theirs).
std::vector<std::string_view> Filesystem::feature_names() const {
  auto features = core::features();
  std::vector<std::string_view> names(features.begin(), features.end());
  if (registry_.default_variant().priority == core::DeviceOptions::Priority::kAndroid)
    names.push_back(core::kAndroidPriorityFeature);
  return names;
}

Filesystem::Resolved Filesystem::resolve(fuse_ino_t ino) const {
  if (LogsDir::owns(ino)) return {Kind::kLogs};
  if (ino == kRootIno) return {Kind::kRoot};
  if (ino == kControlIno) return {Kind::kControl};
  if (ino == kFeaturesIno) return {Kind::kFeaturesDir};
  if (ino >= kFirstFeatureIno && ino < kFirstFeatureIno + feature_names().size())
    return {Kind::kFeature, ino - kFirstFeatureIno};
  if (ino >= kFirstListingIno && ino < kFirstDeviceIno &&
      registry_.frontend_of(ino - kFirstListingIno) == kBinderfs)
    return {Kind::kDevice, ino - kFirstListingIno};
  sync::LockGuard guard(lock_);
  if (auto it = device_inodes_.find(ino); it != device_inodes_.end())
    return {Kind::kDevice, it->second.device};
  return {};
}

bool Filesystem::fill_attr(fuse_ino_t ino, struct stat& st) const {
  if (LogsDir::owns(ino)) return logs_.fill_attr(ino, st);
  st = {};
  st.st_ino = ino;
  st.st_nlink = 1;
  Resolved what = resolve(ino);
  switch (what.kind) {
    case Kind::kRoot:
    case Kind::kFeaturesDir:
      st.st_mode = S_IFDIR | 0755;  // S10.1
      st.st_nlink = 2;
      return true;
    case Kind::kControl:
      st.st_mode = S_IFREG | 0600;  // S10.2: root only
      return true;
    case Kind::kFeature:
      st.st_mode = S_IFREG | 0444;
      st.st_size = kFeatureContent.size();
      return true;
    case Kind::kDevice:
      // A regular file to FUSE (a character device inode would be opened by the kernel's own
      // driver): clients that check fstat before mmap (Python's mmap) refuse to map past the
      // end of a regular file, so the node reports the largest buffer space binder uses (S1.4).
      st.st_mode = S_IFREG | (options_.device_attributes.mode & 07777);
      st.st_size = static_cast<off_t>(uapi::kMaxMappedSize);  // the size of its memfd too
      st.st_uid = options_.device_attributes.uid;
      st.st_gid = options_.device_attributes.gid;
      return true;
    case Kind::kLogs:
    case Kind::kNone:
      return false;
  }
  return false;
}

fuse_ino_t Filesystem::new_device_inode(devices::DeviceId device) {
  sync::LockGuard guard(lock_);
  fuse_ino_t ino = next_device_ino_++;
  device_inodes_.emplace(ino, DeviceInode{device, 1});
  return ino;
}

void Filesystem::lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_entry_param entry{};
  std::string wanted(name);
  if (LogsDir::owns(parent)) {
    auto ino = logs_.lookup(parent, wanted);
    if (!ino) return static_cast<void>(fuse::reply_err(req, ENOENT));
    entry.ino = *ino;
    entry.entry_timeout = entry.attr_timeout = 0;  // proc/<pid> come and go
    fill_attr(entry.ino, entry.attr);
    return static_cast<void>(fuse::reply_entry(req, &entry));
  } else if (parent == kFeaturesIno) {
    auto features = feature_names();
    auto it = std::find(features.begin(), features.end(), wanted);
    if (it == features.end()) return static_cast<void>(fuse::reply_err(req, ENOENT));
    entry.ino = kFirstFeatureIno + static_cast<fuse_ino_t>(it - features.begin());
  } else if (parent != kRootIno) {
    return static_cast<void>(fuse::reply_err(req, ENOENT));
  } else if (wanted == kControlName) {
    entry.ino = kControlIno;
  } else if (wanted == kFeaturesName) {
    entry.ino = kFeaturesIno;
  } else if (wanted == LogsDir::kName) {
    entry.ino = LogsDir::kDirIno;
  } else {
    auto id = registry_.find(wanted, kBinderfs);
    if (!id) return static_cast<void>(fuse::reply_err(req, ENOENT));
    // A fresh inode per lookup, never cached: passthrough takes one backing file per inode.
    entry.ino = new_device_inode(*id);
    entry.entry_timeout = 0;
    entry.attr_timeout = 0;
  }
  if (entry.ino < kFirstDeviceIno) entry.entry_timeout = entry.attr_timeout = 3600;
  fill_attr(entry.ino, entry.attr);
  fuse::reply_entry(req, &entry);
}

void Filesystem::forget(fuse_ino_t ino, std::uint64_t nlookup) {
  sync::LockGuard guard(lock_);
  auto it = device_inodes_.find(ino);
  if (it == device_inodes_.end()) return;
  it->second.lookups -= std::min(it->second.lookups, nlookup);
  if (it->second.lookups == 0) device_inodes_.erase(it);
}

void Filesystem::getattr(fuse_req_t req, fuse_ino_t ino) {
  struct stat st;
  if (!fill_attr(ino, st)) return static_cast<void>(fuse::reply_err(req, ENOENT));
  fuse::reply_attr(req, &st, ino < kFirstDeviceIno ? 3600 : 0);
}

void Filesystem::readdir(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t offset) {
  struct Entry {
    std::string name;
    fuse_ino_t ino;
    mode_t type;
  };
  std::vector<Entry> entries{{".", ino, S_IFDIR}, {"..", kRootIno, S_IFDIR}};
  if (ino == kRootIno) {
    entries.push_back({kControlName, kControlIno, S_IFREG});
    entries.push_back({kFeaturesName, kFeaturesIno, S_IFDIR});
    entries.push_back({LogsDir::kName, LogsDir::kDirIno, S_IFDIR});
    for (auto& device : registry_.devices_of(kBinderfs))
      entries.push_back({std::move(device.name), kFirstListingIno + device.id, S_IFREG});
  } else if (ino == kFeaturesIno) {
    auto features = feature_names();
    for (std::size_t i = 0; i < features.size(); ++i)
      entries.push_back({std::string(features[i]), kFirstFeatureIno + i, S_IFREG});
  } else if (auto logs = logs_.list(ino)) {
    for (auto& entry : *logs) entries.push_back({std::move(entry.name), entry.ino, entry.type});
  } else {
    return static_cast<void>(fuse::reply_err(req, ENOTDIR));
  }
  std::vector<char> buffer(size);
  std::size_t used = 0;
  for (std::size_t i = static_cast<std::size_t>(offset); i < entries.size(); ++i) {
    struct stat st {};
    st.st_ino = entries[i].ino;
    st.st_mode = entries[i].type;
    std::size_t need = fuse_add_direntry(req, buffer.data() + used, size - used,
                                         entries[i].name.c_str(), &st, static_cast<off_t>(i + 1));
    if (need > size - used) break;
    used += need;
  }
  fuse::reply_buf(req, buffer.data(), used);
}

void Filesystem::open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Resolved what = resolve(ino);
  switch (what.kind) {
    case Kind::kDevice:
      return open_device(req, ino, what.index, fi);
    case Kind::kControl: {
      auto file = std::make_unique<OpenFile>(nullptr, 0, false);
      fi->fh = reinterpret_cast<std::uint64_t>(file.get());
      {
        sync::LockGuard guard(lock_);
        open_files_.emplace(file.get(), std::move(file));
      }
      fuse::reply_open(req, fi);
      return;
    }
    case Kind::kFeature:
      if ((fi->flags & O_ACCMODE) != O_RDONLY)
        return static_cast<void>(fuse::reply_err(req, EACCES));
      fi->fh = 0;
      fuse::reply_open(req, fi);
      return;
    case Kind::kLogs:
      return logs_.open(req, ino, fi);
    case Kind::kRoot:
    case Kind::kFeaturesDir:
      return static_cast<void>(fuse::reply_err(req, EISDIR));
    case Kind::kNone:
      return static_cast<void>(fuse::reply_err(req, ENOENT));
  }
}

void Filesystem::open_device(fuse_req_t req, fuse_ino_t ino, devices::DeviceId id,
                             fuse_file_info* fi) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  std::shared_ptr<core::Device> device = registry_.device(id);
  if (!device) return static_cast<void>(fuse::reply_err(req, ENOENT));
  std::unique_ptr<core::BufferFile> buffers;
  try {
    buffers = create_buffer_space(device->name(), ctx->pid);
  } catch (const std::system_error& error) {
    return static_cast<void>(fuse::reply_err(req, error.code().value()));
  }
  int backing_id = fuse_passthrough_open(req, buffers->fd());
  if (backing_id <= 0) {
    fuse_log(FUSE_LOG_ERR,
             "cused: FUSE passthrough refused the buffer memfd (kernel >= 6.9 "
             "and CAP_SYS_ADMIN are needed): %s\n",
             std::strerror(errno));
    return static_cast<void>(fuse::reply_err(req, EIO));
  }
  core::OpenerIdentity opener = opener_of(*ctx);
  const dev_t mount = mount_device_.load(std::memory_order_relaxed);
  auto proc = core::Proc::open(device, opener, std::move(buffers),
                               std::make_unique<MapsFinder>(opener.pid, mount, ino));
  const bool nonblock = fi->flags & O_NONBLOCK;
  // What stat() of the client's descriptor shows: `cused run` finds the proc by it.
  registry_.add_open(proc, nonblock, devices::FileIdentity{mount, ino});
  auto file = std::make_unique<OpenFile>(std::move(proc), backing_id, nonblock, ino);
  fi->fh = reinterpret_cast<std::uint64_t>(file.get());
  fi->backing_id = backing_id;
  {
    sync::LockGuard guard(lock_);
    open_files_.emplace(file.get(), std::move(file));
  }
  fuse::reply_open(req, fi);
}

void Filesystem::read(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t offset,
                      fuse_file_info* fi) {
  if (LogsDir::owns(ino)) return logs_.read(req, size, offset, fi);
  Resolved what = resolve(ino);
  if (what.kind != Kind::kFeature) return static_cast<void>(fuse::reply_err(req, EINVAL));
  std::string_view content = kFeatureContent;
  auto start = std::min(content.size(), static_cast<std::size_t>(offset));
  content = content.substr(start, size);
  fuse::reply_buf(req, content.data(), content.size());
}

void Filesystem::flush(fuse_req_t req, fuse_file_info* fi) {
  if (fi->fh != 0 && file_of(fi).proc()) {
    OpenFile& file = file_of(fi);
    registry_.descriptor_closed(*file.proc());
    // The daemon's own close of a client file it held is not a client's close (own_closes.h).
    if (!OwnClose::closing(fuse_req_ctx(req)->pid)) file.proc()->flush();  // S1.8
  }
  fuse::reply_err(req, 0);
}

void Filesystem::release(fuse_req_t req, fuse_file_info* fi) {
  std::unique_ptr<OpenFile> file;
  if (fi->fh != 0) {
    sync::LockGuard guard(lock_);
    auto node = open_files_.extract(reinterpret_cast<const OpenFile*>(fi->fh));
    if (!node.empty()) file = std::move(node.mapped());
  }
  if (file && file->proc()) {
    registry_.remove_open(*file->proc());
    thread_exits_.forget(file->proc().get());
    run_guarded(
        RequestEntry::kBinderfs, "release", [&] { file->proc()->release(); },  // S1.9
        [](int) {});
    fuse_passthrough_close(req, file->backing_id());
  }
  file.reset();  // closes the memfd before the release is answered
  fuse::reply_err(req, 0);
}

void Filesystem::ioctl(fuse_req_t req, unsigned cmd, std::uint64_t arg, fuse_file_info* fi,
                       const void* in, std::size_t in_size, std::size_t out_size) {
  if (fi->fh == 0) return static_cast<void>(fuse::reply_err(req, ENOTTY));
  OpenFile& file = file_of(fi);
  if (!file.proc()) return control_ioctl(req, cmd, in, in_size);
  bool uring = fuse_req_is_uring(req);
  if (uring) uring_ioctls_.fetch_add(1, std::memory_order_relaxed);
  const fuse_ctx* ctx = fuse_req_ctx(req);
  bool first_seen = false;
  pid_t caller = file.thread_group_of(ctx->pid, &first_seen);
  if (first_seen && caller == file.proc()->pid()) thread_exits_.watch(file.proc(), ctx->pid);
  core::IoctlRequest request{caller,
                             ctx->pid,
                             ctx->uid,
                             cmd,
                             std::span(static_cast<const std::byte*>(in), in_size),
                             file.nonblock(),
                             {},
                             arg};
  auto completion =
      std::make_unique<fuse::IoctlCompletion>(req, ctx->pid, out_size, file.proc(), interrupts_);
  completion->watch_interrupts(uring ? &uring_requests_ : nullptr);
  CallerScheduling scheduling(ctx->pid, serves_at_caller_priority(*file.proc()));
  file.proc()->ioctl(request, std::move(completion));
}

// binderfs_unlink (S10.4): binder-control stays; a device leaves the namespace but lives on in
// the procs that have it open. The read-only directories have no unlink (EPERM).
void Filesystem::unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  if (parent != kRootIno) return static_cast<void>(fuse::reply_err(req, EPERM));
  std::string wanted(name);
  if (wanted == kControlName) return static_cast<void>(fuse::reply_err(req, EPERM));
  if (wanted == kFeaturesName || wanted == LogsDir::kName)
    return static_cast<void>(fuse::reply_err(req, EISDIR));
  fuse::reply_err(req, -registry_.unlink(wanted, kBinderfs));
}

// binderfs_rename (S10.4): simple_rename within the root, except that binder-control can be
// neither source nor target (EPERM). features/ and binder_logs/ stay where they are (EPERM).
void Filesystem::rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
                        const char* newname, unsigned flags) {
  int err =
      (parent != kRootIno || newparent != kRootIno) ? -EPERM : rename_device(name, newname, flags);
  fuse::reply_err(req, -err);
}

int Filesystem::rename_device(const std::string& from, const std::string& to, unsigned flags) {
  if (flags & ~static_cast<unsigned>(RENAME_NOREPLACE | RENAME_EXCHANGE)) return -EINVAL;
  if (from == kControlName || to == kControlName) return -EPERM;
  if (reserved_name(from)) return -EPERM;
  if (!registry_.find(from, kBinderfs)) return -ENOENT;
  if (reserved_name(to)) return -EISDIR;  // a device onto a directory
  return registry_.rename(from, to, flags, kBinderfs);
}

void Filesystem::poll(fuse_req_t req, fuse_file_info* fi, fuse_pollhandle* ph) {
  if (fi->fh == 0 || !file_of(fi).proc()) {
    if (ph) fuse_pollhandle_destroy(ph);
    return static_cast<void>(fuse::reply_poll(req, 0));
  }
  fuse::reply_proc_poll(req, *file_of(fi).proc(), fuse_req_ctx(req)->pid, ph);
}

namespace {

void op_init(void*, fuse_conn_info* conn) {
  // Passthrough is the point (the client's mmap maps the proc's memfd); ask for it whenever the
  // kernel offers it. Without it, opening a device node fails with EIO and a log line.
  if (!fuse_set_feature_flag(conn, FUSE_CAP_PASSTHROUGH))
    fuse_log(FUSE_LOG_ERR, "cused: this kernel's FUSE has no passthrough (Linux >= 6.9)\n");
  // Binder nodes are not data files: no page cache, no readahead or writeback of ours.
  fuse_unset_feature_flag(conn, FUSE_CAP_WRITEBACK_CACHE);
  // No request carries more than a 264-byte ioctl argument or a feature file, so small request
  // buffers suffice; they size every worker thread's and every io_uring entry's buffer.
  conn->max_write = kMaxRequestPayload;
}

// Every operation runs guarded (cused/fuse/request.h): an exception fails only its request.
RequestEntry entry_of(fuse_ino_t ino) {
  if (LogsDir::owns(ino)) return RequestEntry::kLogs;
  return ino == kControlIno ? RequestEntry::kControl : RequestEntry::kBinderfs;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse::serve(req, entry_of(parent), "lookup", [&] { self(req).lookup(req, parent, name); });
}
void op_forget(fuse_req_t req, fuse_ino_t ino, std::uint64_t nlookup) {
  fuse::serve(
      req, entry_of(ino), "forget",
      [&] {
        self(req).forget(ino, nlookup);
        fuse::reply_none(req);
      },
      fuse::FailWith::kNone);
}
void op_forget_multi(fuse_req_t req, std::size_t count, fuse_forget_data* forgets) {
  fuse::serve(
      req, RequestEntry::kBinderfs, "forget",
      [&] {
        for (std::size_t i = 0; i < count; ++i)
          self(req).forget(forgets[i].ino, forgets[i].nlookup);
        fuse::reply_none(req);
      },
      fuse::FailWith::kNone);
}
void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  fuse::serve(req, entry_of(ino), "getattr", [&] { self(req).getattr(req, ino); });
}
void op_readdir(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info*) {
  fuse::serve(req, entry_of(ino), "readdir", [&] { self(req).readdir(req, ino, size, off); });
}
void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  fuse::serve(req, entry_of(ino), "open", [&] { self(req).open(req, ino, fi); });
}
void op_read(fuse_req_t req, fuse_ino_t ino, std::size_t size, off_t off, fuse_file_info* fi) {
  fuse::serve(req, entry_of(ino), "read", [&] { self(req).read(req, ino, size, off, fi); });
}
// binder_logs files carry a snapshot as their handle, not an OpenFile.
void op_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  fuse::serve(req, entry_of(ino), "flush", [&] {
    if (LogsDir::owns(ino)) return static_cast<void>(fuse::reply_err(req, 0));
    self(req).flush(req, fi);
  });
}
// Not guarded as a whole: a release cannot fail (the kernel ignores its answer and sends no
// other), so the handler itself guards the proc's teardown and always frees what the open held.
void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (LogsDir::owns(ino)) return self(req).logs().release(req, fi);
  self(req).release(req, fi);
}
void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned cmd, void* arg, fuse_file_info* fi, unsigned,
              const void* in, std::size_t in_size, std::size_t out_size) {
  fuse::serve(req, entry_of(ino), "ioctl", [&] {
    if (LogsDir::owns(ino)) return static_cast<void>(fuse::reply_err(req, ENOTTY));
    self(req).ioctl(req, cmd, reinterpret_cast<std::uint64_t>(arg), fi, in, in_size, out_size);
  });
}
void op_poll(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, fuse_pollhandle* ph) {
  fuse::serve(req, entry_of(ino), "poll", [&] {
    if (LogsDir::owns(ino)) {
      if (ph) fuse_pollhandle_destroy(std::exchange(ph, nullptr));
      return static_cast<void>(fuse::reply_poll(req, POLLIN));
    }
    self(req).poll(req, fi, std::exchange(ph, nullptr));
  });
  if (ph) fuse_pollhandle_destroy(ph);  // the handler failed before it took the handle
}
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse::serve(req, entry_of(parent), "unlink", [&] { self(req).unlink(req, parent, name); });
}
void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
               const char* newname, unsigned flags) {
  fuse::serve(req, entry_of(parent), "rename",
              [&] { self(req).rename(req, parent, name, newparent, newname, flags); });
}

fuse_lowlevel_ops make_operations() {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.forget = op_forget;
  ops.forget_multi = op_forget_multi;
  ops.getattr = op_getattr;
  ops.readdir = op_readdir;
  ops.open = op_open;
  ops.read = op_read;
  ops.flush = op_flush;
  ops.release = op_release;
  ops.ioctl = op_ioctl;
  ops.poll = op_poll;
  ops.unlink = op_unlink;
  ops.rename = op_rename;
  return ops;
}

}  // namespace

const fuse_lowlevel_ops& Filesystem::operations() {
  static const fuse_lowlevel_ops ops = make_operations();
  return ops;
}

}  // namespace cused::binderfs
