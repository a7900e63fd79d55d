// SPDX-License-Identifier: GPL-2.0-only
// What the kernel keeps in globals: debug ids, the list of every proc of every device (what
// BINDER_FREEZE and the logs walk) and the page LRU all allocators share. One per
// daemon; tests make their own so that they share nothing.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <vector>

#include "core/alloc/page_lru.h"
#include "core/locks.h"
#include "core/stats.h"
#include "core/thread_priority.h"
#include "core/timer.h"
#include "core/transaction_log.h"

namespace cused::core {

class Node;
class Proc;

class Driver {
 public:
  Driver() = default;
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  // The daemon's driver: what a Device uses when it is given none.
  static std::shared_ptr<Driver> shared_default();

  // binder_last_id: one counter for procs' transactions, nodes and refs (S2.14: only equality of
  // ids matters).
  int next_debug_id() { return last_id_.fetch_add(1, std::memory_order_relaxed) + 1; }
  alloc::PageLru& page_lru() { return page_lru_; }
  // S4.12's host (core/thread_priority.h), null for none. Set before the first proc opens: a
  // proc takes it at open.
  const std::shared_ptr<ThreadPriorities>& thread_priorities() const { return priorities_; }
  void set_thread_priorities(std::shared_ptr<ThreadPriorities> priorities) {
    priorities_ = std::move(priorities);
  }
  // Deadlines and simulated costs (core/timer.h), from the host; it must outlive the Driver. Set
  // before the first Device is made on this Driver: Device's constructor checks.
  // Atomic: a frontend may set the process's timer again while another one's procs run.
  bool has_timer() const { return timer_.load(std::memory_order_acquire) != nullptr; }
  Timer& timer() const { return *timer_.load(std::memory_order_acquire); }
  void set_timer(Timer& timer) { timer_.store(&timer, std::memory_order_release); }

  // `pid`: the proc's thread group, what BINDER_FREEZE and the logs look procs up by.
  void add_proc(pid_t pid, const std::shared_ptr<Proc>& proc) CUSED_EXCLUDES(procs_lock_);
  void remove_proc(pid_t pid, const Proc& proc) CUSED_EXCLUDES(procs_lock_);
  // Live procs opened by thread group `pid`, on any device (S2.10, S2.11).
  std::vector<std::shared_ptr<Proc>> procs_of(pid_t pid) const CUSED_EXCLUDES(procs_lock_);
  std::size_t proc_count() const CUSED_EXCLUDES(procs_lock_);
  // Every live proc of every device, by pid (what binder_logs walks).
  std::vector<std::shared_ptr<Proc>> procs() const CUSED_EXCLUDES(procs_lock_);

  // binder_logs (S10.6): the global counters, the transaction rings and the dead nodes.
  const std::shared_ptr<Stats>& stats() const { return stats_; }
  TransactionLog& transaction_log() { return transaction_log_; }
  TransactionLog& failed_transaction_log() { return failed_transaction_log_; }
  // A node whose owner died while refs still held it (binder_dead_nodes): listed while it lives.
  void add_dead_node(const std::shared_ptr<Node>& node) CUSED_EXCLUDES(dead_nodes_lock_);
  std::vector<std::shared_ptr<Node>> dead_nodes() CUSED_EXCLUDES(dead_nodes_lock_);

 private:
  std::atomic<int> last_id_{0};
  alloc::PageLru page_lru_;
  std::shared_ptr<ThreadPriorities> priorities_;
  std::atomic<Timer*> timer_{nullptr};
  mutable ProcsLock procs_lock_;
  // By pid, in the order they opened: what procs_of and the logs' pid order read.
  std::multimap<pid_t, std::weak_ptr<Proc>> procs_ CUSED_GUARDED_BY(procs_lock_);
  const std::shared_ptr<Stats> stats_ = std::make_shared<Stats>();
  TransactionLog transaction_log_;
  TransactionLog failed_transaction_log_;
  sync::SpinLock dead_nodes_lock_;  // binder_dead_nodes_lock
  std::vector<std::weak_ptr<Node>> dead_nodes_ CUSED_GUARDED_BY(dead_nodes_lock_);
};

}  // namespace cused::core
