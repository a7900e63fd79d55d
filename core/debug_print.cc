// SPDX-License-Identifier: GPL-2.0-only
#include "core/debug_print.h"

#include <fmt/format.h>

#include <chrono>
#include <iterator>
#include <vector>

#include "core/device_variant.h"
#include "core/node.h"
#include "core/ref.h"
#include "core/thread.h"
#include "core/transaction.h"
#include "core/txn_plan.h"
#include "core/wake.h"

namespace cused::core {
namespace {

template <typename... Args>
void put(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

void print_header(std::string& out, Proc& proc) {
  put(out, "proc {}\ncontext {}\n  variant: {}\n", proc.pid(), proc.device().name(),
      to_string(proc.options()));
}

// The work items the kernel shows as a fixed phrase; "" for the others. The kernel has no phrase
// for a pending-frozen or spam-suspect completion: it prints their type's number.
std::string_view phrase_of(WorkType type) {
  switch (type) {
    case WorkType::kTransactionComplete:
      return "transaction complete";
    case WorkType::kDeadBinder:
      return "has dead binder";
    case WorkType::kDeadBinderAndClear:
      return "has cleared dead binder";
    case WorkType::kClearDeathNotification:
      return "has cleared death notification";
    case WorkType::kFrozenBinder:
      return "has frozen binder";
    case WorkType::kClearFreezeNotification:
      return "has cleared freeze notification";
    default:
      return {};
  }
}

// The number of `type` in the kernel's enum binder_work_type, which lists the same kinds in the
// same order from 1.
int kernel_work_type(WorkType type) { return static_cast<int>(type) + 1; }

// A bijective 64-bit mix (murmur3's finaliser) of an address, so that state files do not show
// the daemon's heap layout; nonzero for any nonzero address.
std::uint64_t hashed_address(const void* address) {
  auto x = reinterpret_cast<std::uint64_t>(address);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

long long elapsed_ms(const Transaction& t) {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now() - t.start_time).count();
}

}  // namespace

std::string DebugPrint::state(Driver& driver) {
  WakeScope scope(0);  // the printer's node references can wake readers (print_nodes)
  std::string out = "binder state:\n";
  auto dead = driver.dead_nodes();
  if (!dead.empty()) out += "dead nodes:\n";
  for (const auto& node : dead) {
    sync::LockGuard guard(node->lock);
    print_node(out, *node);
  }
  for (const auto& proc : driver.procs()) print_proc(out, *proc, true);
  return out;
}

std::string DebugPrint::transactions(Driver& driver) {
  WakeScope scope(0);  // the printer's node references can wake readers (print_nodes)
  std::string out = "binder transactions:\n";
  for (const auto& proc : driver.procs()) print_proc(out, *proc, false);
  return out;
}

std::string DebugPrint::proc(Driver& driver, pid_t pid) {
  WakeScope scope(0);  // the printer's node references can wake readers (print_nodes)
  std::string out;
  for (const auto& proc : driver.procs()) {
    if (proc->pid() != pid) continue;
    out += "binder proc state:\n";
    print_proc(out, *proc, true);
  }
  return out;
}

std::string DebugPrint::stats(Driver& driver, std::span<const std::shared_ptr<Device>> devices) {
  std::string out = "binder stats:\n";
  driver.stats()->print(out, "");
  for (const auto& device : devices)
    put(out, "device {}\n  variant: {}\n", device->name(), to_string(device->options()));
  for (const auto& proc : driver.procs()) print_proc_stats(out, *proc);
  return out;
}

// print_binder_proc: a proc with nothing but its header is left out of `transactions`.
void DebugPrint::print_proc(std::string& out, Proc& proc, bool print_all) {
  const std::size_t start = out.size();
  print_header(out, proc);
  const std::size_t header_end = out.size();
  print_threads(out, proc, print_all);
  print_nodes(out, proc, print_all);
  if (print_all) print_refs(out, proc);
  print_buffers(out, proc);
  print_proc_work(out, proc);
  if (!print_all && out.size() == header_end) out.resize(start);
}

void DebugPrint::print_threads(std::string& out, Proc& proc, bool print_all) {
  sync::LockGuard guard(proc.inner_lock_);
  for (const auto& [tid, thread] : proc.threads_) print_thread(out, proc, *thread, print_all);
}

void DebugPrint::print_thread(std::string& out, Proc& proc, Thread& thread, bool print_all) {
  proc.assume_locked(thread);
  const std::size_t start = out.size();
  put(out, "  thread {}: l {:02x} need_return {:d} tr 0\n", thread.tid, thread.looper,
      thread.need_return);
  const std::size_t header_end = out.size();
  std::shared_ptr<Transaction> t = thread.transaction_stack;
  while (t) {
    std::shared_ptr<Transaction> next;
    std::string_view prefix = "    bad transaction";
    {
      sync::LockGuard txn_guard(t->lock);
      if (t->from.get() == &thread) {
        prefix = "    outgoing transaction";
        next = t->from_parent;
      } else if (t->to_thread.get() == &thread) {
        prefix = "    incoming transaction";
        next = t->to_parent;
      }
    }
    print_transaction(out, &proc, prefix, *t);
    t = std::move(next);
  }
  thread.todo.for_each(
      [&](Work& work) { print_work(out, &proc, "    ", "    pending transaction", work); });
  if (!print_all && out.size() == header_end) out.resize(start);
}

// Nodes are printed under their own lock (and their owner's inner lock), so the proc's inner lock
// is dropped in between; the collected pointers keep them alive meanwhile.
void DebugPrint::print_nodes(std::string& out, Proc& proc, bool print_all) {
  std::vector<std::shared_ptr<Node>> nodes;
  {
    sync::LockGuard guard(proc.inner_lock_);
    for (const auto& [ptr, node] : proc.nodes_) nodes.push_back(node);
  }
  for (const auto& node : nodes) {
    {
      NodeInnerGuard guard(*node);
      // `transactions` shows only nodes with a oneway in flight.
      if (!print_all && !node->has_async_transaction) continue;
      // binder_inc_node_tmpref: the kernel's printer holds a temporary reference on each node it
      // prints ("tr" counts it). Dropping it afterwards is a real decrement: a node whose owner
      // holds a reference userspace was told about and that nothing else references gets its
      // node work queued again, as reading the kernel's debugfs state does.
      node->tmp_refs++;
      print_node(out, *node);
    }
    Proc::put_node(*node);
  }
}

void DebugPrint::print_node(std::string& out, Node& node) {
  put(out, "  node {}: u{:016x} c{:016x} hs {:d} hw {:d} ls {} lw {} is {} iw {} tr {}",
      node.debug_id, node.ptr, node.cookie, node.has_strong_ref, node.has_weak_ref,
      node.local_strong_refs, node.local_weak_refs, node.internal_strong_refs, node.refs.size(),
      node.tmp_refs.load());
  if (!node.refs.empty()) {
    out += " proc";
    for (const Ref& ref : node.refs) put(out, " {}", ref.proc.pid());
  }
  out += "\n";
  if (Proc* owner = node.proc.get()) {
    node.async_todo.for_each(
        [&](Work& work) { print_work(out, owner, "    ", "    pending async transaction", work); });
  }
}

void DebugPrint::print_refs(std::string& out, Proc& proc) {
  sync::LockGuard guard(proc.outer_lock_);
  for (const auto& [desc, ref] : proc.refs_.by_desc()) {
    assume_same_lock(proc.outer_lock_, ref->outer_lock);
    const std::uint32_t strong = ref->strong, weak = ref->weak;
    sync::LockGuard node_guard(ref->node_lock);
    assume_same_lock(ref->node_lock, ref->node->lock);
    // The kernel prints the address of the death record (%pK, hashed): nonzero when one is
    // registered, whatever its cookie. This prints a mix of the record's address, never 0.
    std::uint64_t death = ref->death ? hashed_address(ref->death.get()) : 0;
    put(out, "  ref {}: desc {} {}node {} s {} w {} d {:016x}\n", ref->debug_id, ref->desc,
        ref->node->proc ? "" : "dead ", ref->node->debug_id, strong, weak, death);
  }
}

// binder_alloc_print_allocated. The allocator's lock is taken alone (lock order), so whether a
// buffer's transaction still uses it is looked up afterwards under the proc's inner lock.
void DebugPrint::print_buffers(std::string& out, Proc& proc) {
  struct Line {
    const alloc::Buffer* buffer;
    std::uint32_t debug_id;
    std::size_t offset, data_size, offsets_size, extra_size;
  };
  std::vector<Line> lines;
  proc.alloc_->for_each_allocated([&](const alloc::Buffer& b) {
    lines.push_back(
        {&b, b.debug_id(), b.offset(), b.data_size(), b.offsets_size(), b.extra_buffers_size()});
  });
  sync::LockGuard guard(proc.inner_lock_);
  for (const Line& line : lines) {
    auto it = proc.buffer_states_.find(line.buffer);
    bool active = it != proc.buffer_states_.end() && !it->second.transaction.expired();
    put(out, "  buffer {}: {:x} size {}:{}:{} {}\n", line.debug_id, line.offset, line.data_size,
        line.offsets_size, line.extra_size, active ? "active" : "delivered");
  }
}

void DebugPrint::print_proc_work(std::string& out, Proc& proc) {
  sync::LockGuard guard(proc.inner_lock_);
  proc.todo_.for_each(
      [&](Work& work) { print_work(out, &proc, "  ", "  pending transaction", work); });
  if (!proc.delivered_death_.empty()) out += "  has delivered dead binder\n";
  if (!proc.delivered_freeze_.empty()) out += "  has delivered freeze binder\n";
}

void DebugPrint::print_work(std::string& out, const Proc* proc, std::string_view prefix,
                            std::string_view transaction_prefix, Work& work) {
  switch (work.type) {
    case WorkType::kTransaction:
      return print_transaction(out, proc, transaction_prefix, static_cast<Transaction&>(work));
    case WorkType::kReturnError: {
      auto& error = static_cast<ErrorWork&>(work);
      proc->assume_inner_locked();  // the caller's promise
      assume_same_lock(proc->inner_lock_, error.thread.inner_lock);
      put(out, "{}transaction error: {}\n", prefix, error.thread.error_cmd(error));
      return;
    }
    case WorkType::kNode: {
      const Node& node = static_cast<NodeWork&>(work).node;
      put(out, "{}node work {}: u{:016x} c{:016x}\n", prefix, node.debug_id, node.ptr, node.cookie);
      return;
    }
    default:
      break;
  }
  if (std::string_view phrase = phrase_of(work.type); !phrase.empty())
    return put(out, "{}{}\n", prefix, phrase);
  put(out, "{}unknown work: type {}\n", prefix, kernel_work_type(work.type));
}

// print_binder_transaction_ilocked. The buffer is only looked at from its owner's side: the
// caller holds that proc's inner lock, under which the buffer cannot be freed.
void DebugPrint::print_transaction(std::string& out, const Proc* proc, std::string_view prefix,
                                   Transaction& t) {
  const Proc* to_proc;
  const alloc::Buffer* buffer;
  {
    sync::LockGuard guard(t.lock);
    to_proc = t.to_proc.get();
    buffer = t.buffer;
    put(out,
        "{} {}: {:016x} from {}:{} to {}:{} code {:x} flags {:x} pri {} a{:d} r{:d} elapsed {}ms",
        prefix, t.debug_id, 0, t.from_pid, t.from_tid, to_proc ? to_proc->pid() : 0,
        t.to_thread ? t.to_thread->tid : 0, t.code, t.flags, t.priority, t.is_async,
        !t.is_async && !t.is_reply, elapsed_ms(t));
  }
  if (proc != to_proc) {
    out += "\n";
    return;
  }
  if (!buffer) {
    out += " buffer free\n";
    return;
  }
  if (t.target_node) put(out, " node {}", t.target_node->debug_id);
  put(out, " size {}:{} offset {:x}\n", buffer->data_size(), buffer->offsets_size(),
      buffer->offset());
}

void DebugPrint::print_proc_stats(std::string& out, Proc& proc) {
  const alloc::AllocatorStats space = proc.alloc_->stats();
  print_header(out, proc);
  {
    sync::LockGuard guard(proc.inner_lock_);
    std::size_t ready = 0;
    for (const Thread& thread : proc.waiting_threads_) {
      (void)thread;
      ++ready;
    }
    put(out,
        "  threads: {}\n  requested threads: {}+{}/{}\n  ready threads {}\n"
        "  free async space {}\n  nodes: {}\n",
        proc.threads_.size(), proc.requested_threads_, proc.requested_threads_started_,
        proc.max_threads_, ready, space.free_async_space, proc.nodes_.size());
  }
  {
    sync::LockGuard guard(proc.outer_lock_);
    std::uint64_t strong = 0, weak = 0;
    for (const auto& [desc, ref] : proc.refs_.by_desc()) {
      assume_same_lock(proc.outer_lock_, ref->outer_lock);
      strong += ref->strong;
      weak += ref->weak;
    }
    put(out, "  refs: {} s {} w {}\n", proc.refs_.size(), strong, weak);
  }
  put(out, "  buffers: {}\n", proc.alloc_->allocated_count());
  // A kernel design's lines are its file's own binder_alloc_print_pages.
  const std::string pages = proc.alloc_->print_pages();
  if (pages.empty())
    put(out, "  pages: {}:{}:{}\n  pages high watermark: {}\n", space.pages.active, space.pages.lru,
        space.pages.free, space.pages_high);
  else
    out += pages;
  std::size_t pending = 0;
  {
    sync::LockGuard guard(proc.inner_lock_);
    proc.todo_.for_each([&](Work& work) { pending += work.type == WorkType::kTransaction; });
  }
  put(out, "  pending transactions: {}\n", pending);
  proc.stats_.print(out, "  ");
}

}  // namespace cused::core
