// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/fd_resolver.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "core/sync/lock_guard.h"

namespace cused::run {

FdResolver::Resolved FdResolver::resolve(pid_t tgid, pid_t tid, int fd) {
  {
    sync::LockGuard guard(lock_);
    auto it = entries_.find({tgid, fd});
    if (it != entries_.end()) {
      if (auto proc = it->second.proc.lock()) return {std::move(proc), it->second.nonblock};
    }
  }
  Resolved found = look_up(tid, fd);
  if (!found.proc) return found;
  sync::LockGuard guard(lock_);
  entries_.insert_or_assign({tgid, fd}, Entry{found.proc, found.proc.get(), found.nonblock});
  keys_of_.emplace(found.proc.get(), Key{tgid, fd});
  return found;
}

FdResolver::Resolved FdResolver::look_up(pid_t tid, int fd) const {
  struct statx file {};
  std::string path = fmt::format("/proc/{}/fd/{}", tid, fd);
  // DONT_SYNC: the inode's cached attributes, so a FUSE file costs no GETATTR round trip.
  if (statx(AT_FDCWD, path.c_str(), AT_STATX_DONT_SYNC, STATX_INO, &file) != 0) return {};
  devices::OpenProc open = registry_.open_of(
      {makedev(file.stx_dev_major, file.stx_dev_minor), static_cast<ino_t>(file.stx_ino)});
  return {std::move(open.proc), open.nonblock};
}

void FdResolver::forget(const core::Proc& proc) {
  sync::LockGuard guard(lock_);
  auto [begin, end] = keys_of_.equal_range(&proc);
  for (auto it = begin; it != end; ++it) {
    auto entry = entries_.find(it->second);
    if (entry != entries_.end() && entry->second.key == &proc) entries_.erase(entry);
  }
  keys_of_.erase(begin, end);
}

std::size_t FdResolver::cached() const {
  sync::LockGuard guard(lock_);
  return entries_.size();
}

}  // namespace cused::run
