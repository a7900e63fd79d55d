// SPDX-License-Identifier: GPL-2.0-only
// One open file description of a binderfs node, as FUSE's file handle (fi->fh) names it: the
// core proc behind a device node (none for binder-control), its passthrough backing id, and the
// thread-group cache that turns the request's tid into the caller's process.
#pragma once

#include <sys/types.h>

#include <memory>

#include "core/proc.h"
#include "cused/fuse/fuse.h"
#include "cused/thread_groups.h"

namespace cused::binderfs {

class OpenFile {
 public:
  OpenFile(std::shared_ptr<core::Proc> proc, int backing_id, bool nonblock, fuse_ino_t ino = 0)
      : proc_(std::move(proc)), backing_id_(backing_id), nonblock_(nonblock), ino_(ino) {}

  const std::shared_ptr<core::Proc>& proc() const { return proc_; }
  // The inode this open was made on (each open of a device has one of its own), 0 for
  // binder-control: what stat() of the client's descriptor shows.
  fuse_ino_t ino() const { return ino_; }
  int backing_id() const { return backing_id_; }
  bool nonblock() const { return nonblock_; }

  // FUSE names the calling thread; binder needs its thread group too (S1.3).
  pid_t thread_group_of(pid_t tid, bool* first_seen = nullptr) {
    return thread_groups_.of(tid, first_seen);
  }

 private:
  const std::shared_ptr<core::Proc> proc_;
  const int backing_id_;
  const bool nonblock_;  // O_NONBLOCK at open (FUSE does not forward later fcntl changes)
  const fuse_ino_t ino_;
  ThreadGroups thread_groups_;
};

}  // namespace cused::binderfs
