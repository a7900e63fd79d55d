// SPDX-License-Identifier: GPL-2.0-only
// binder_logs/ of the binderfs look-alike (S10.6): read-only text files whose content is built
// when the file is opened, so that every read of one open file sees the same snapshot:
//   state, stats, transactions, transaction_log, failed_transaction_log, and proc/<pid> for every
//   thread group that has a binder device open.
// Files report size 0 and are opened with direct_io, as debugfs files are read: to the end.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/driver.h"
#include "core/sync/mutex.h"
#include "cused/fuse/fuse.h"

namespace cused::binderfs {

class LogsDir {
 public:
  static constexpr const char* kName = "binder_logs";
  static constexpr fuse_ino_t kDirIno = 4;
  static constexpr fuse_ino_t kProcDirIno = 5;

  struct DirEntry {
    std::string name;
    fuse_ino_t ino;
    mode_t type;  // S_IFDIR or S_IFREG
  };

  // `devices`: the mount's devices now (the `stats` file names their variants).
  LogsDir(std::shared_ptr<core::Driver> driver,
          std::function<std::vector<std::shared_ptr<core::Device>>()> devices);

  // Whether `ino` is binder_logs/ or something in it.
  static bool owns(fuse_ino_t ino);
  // The inode of `name` in directory `parent` (one of ours); nullopt: ENOENT.
  std::optional<fuse_ino_t> lookup(fuse_ino_t parent, const std::string& name) const;
  bool fill_attr(fuse_ino_t ino, struct stat& st) const;
  // The entries of one of our directories (without "." and ".."); nullopt: ENOTDIR.
  std::optional<std::vector<DirEntry>> list(fuse_ino_t ino) const;

  void open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  void read(fuse_req_t req, std::size_t size, off_t offset, fuse_file_info* fi);
  void release(fuse_req_t req, fuse_file_info* fi);

 private:
  // The file's text now; nullopt when it is gone (a proc/<pid> whose procs all closed).
  std::optional<std::string> render(fuse_ino_t ino) const;
  bool pid_has_proc(pid_t pid) const;

  const std::shared_ptr<core::Driver> driver_;
  const std::function<std::vector<std::shared_ptr<core::Device>>()> devices_;
  mutable sync::Mutex lock_;
  std::map<const std::string*, std::unique_ptr<std::string>> snapshots_ CUSED_GUARDED_BY(lock_);
};

}  // namespace cused::binderfs
