// SPDX-License-Identifier: GPL-2.0-only
// The daemon's own close() of a client's file it holds (a binder fd passed in a transaction under
// `cused run`, held by a HeldFile): FUSE sends a flush for it like for any close, but it is not a
// client's close and must not wake the proc's readers (S1.8). A thread that closes such a file
// says so for the duration of the close; the flush handler (another thread: the close waits for
// its answer) asks by the closing thread's tid, which the flush request names.
#pragma once

#include <sys/types.h>

namespace cused {

class OwnClose {
 public:
  OwnClose();  // the calling thread is closing a file the daemon held
  ~OwnClose();
  OwnClose(const OwnClose&) = delete;
  OwnClose& operator=(const OwnClose&) = delete;

  // Whether thread `tid` is inside an OwnClose.
  static bool closing(pid_t tid);
};

}  // namespace cused
