// SPDX-License-Identifier: GPL-2.0-only
// The state binder_transaction carries from one step to the next (transaction.cc, translate.cc).
#pragma once

#include <memory>
#include <string>

#include "core/proc.h"

namespace cused::core {

struct Proc::TxnPlan {
  bool reply = false;
  // The sender's file table (null: FUSE, CUSE), where FD and FDA objects take their files from.
  CallerFiles* sender_files = nullptr;
  std::shared_ptr<Transaction> t;
  std::shared_ptr<Transaction> in_reply_to;
  std::shared_ptr<Proc> target_proc;
  std::shared_ptr<Thread> target_thread;
  // The target node with a temporary reference and, until the buffer owns it, a local strong
  // reference (S4.1).
  NodeTmpRef target_node;
  bool holds_target_strong = false;
  std::string secctx;
  alloc::Buffer* buffer = nullptr;
  BufferState state;
  std::shared_ptr<CompleteWork> tcomplete;
  bool tcomplete_queued = false;
};

}  // namespace cused::core
