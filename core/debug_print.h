// SPDX-License-Identifier: GPL-2.0-only
// The text of binder_logs/ (S10.6), in the kernel's line shapes: `state`, `transactions`,
// `proc/<pid>` and `stats` (binder_state_show, binder_transactions_show, binder_proc_show,
// binder_stats_show); the transaction rings are filled by Proc::record_transaction.
// Each call builds one consistent snapshot per object, taking the locks the kernel takes while it
// prints (proc inner lock for threads, nodes and queues; node lock plus owner inner lock for a
// node; outer lock then node lock for refs; the allocator's lock alone for buffers).
//
// Where cused has nothing to show for a kernel field, it prints what it has (docs/binder_logs.md):
// buffers and transactions show their offset in the buffer space, `pri` is 0, a ref's `d` is its
// death cookie, a thread's `tr` is 0. Each proc block and each device in `stats` adds a
// `variant:` line (docs/design.md section 5).
#pragma once

#include <sys/types.h>

#include <memory>
#include <span>
#include <string>

#include "core/device.h"
#include "core/driver.h"
#include "core/proc.h"

namespace cused::core {

class DebugPrint {
 public:
  static std::string state(Driver& driver);
  static std::string transactions(Driver& driver);
  // Empty when no live proc has that pid (the file is gone then).
  static std::string proc(Driver& driver, pid_t pid);
  // `devices`: the devices whose variant the file lists (the mount's devices).
  static std::string stats(Driver& driver, std::span<const std::shared_ptr<Device>> devices);

 private:
  static void print_proc(std::string& out, Proc& proc, bool print_all);
  static void print_proc_stats(std::string& out, Proc& proc);
  static void print_threads(std::string& out, Proc& proc, bool print_all);
  static void print_thread(std::string& out, Proc& proc, Thread& thread, bool print_all)
      CUSED_REQUIRES(proc.inner_lock_);
  static void print_nodes(std::string& out, Proc& proc, bool print_all);
  static void print_node(std::string& out, Node& node) CUSED_REQUIRES(node.lock);
  static void print_refs(std::string& out, Proc& proc);
  static void print_buffers(std::string& out, Proc& proc);
  static void print_proc_work(std::string& out, Proc& proc);
  // The caller holds the inner lock of the proc whose list holds `work`.
  static void print_work(std::string& out, const Proc* proc, std::string_view prefix,
                         std::string_view transaction_prefix, Work& work);
  static void print_transaction(std::string& out, const Proc* proc, std::string_view prefix,
                                Transaction& t);
};

}  // namespace cused::core
