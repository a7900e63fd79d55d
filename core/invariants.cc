// SPDX-License-Identifier: GPL-2.0-only
#include "core/invariants.h"

#include <fmt/format.h>

#include <utility>

#include "core/proc.h"

namespace cused::core {

namespace {

template <typename... Args>
void fail(Violations& out, const Proc& proc, fmt::format_string<Args...> format, Args&&... args) {
  out.push_back(fmt::format("proc {}: ", proc.pid()) +
                fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace

Violations InvariantChecker::check(const Proc& proc) {
  Violations out;
  check_refs(proc, out);
  check_nodes(proc, out);
  check_buffers(proc, out, /*released=*/false);
  check_space(proc, out);
  return out;
}

Violations InvariantChecker::check_released(const Proc& proc) {
  Violations out;
  check_refs(proc, out);
  check_nodes(proc, out);
  check_buffers(proc, out, /*released=*/true);
  {
    sync::LockGuard guard(proc.outer_lock_);
    if (!proc.refs_.empty()) fail(out, proc, "{} refs left after release", proc.refs_.size());
  }
  sync::LockGuard guard(proc.inner_lock_);
  if (!proc.threads_.empty())
    fail(out, proc, "{} threads left after release", proc.threads_.size());
  if (!proc.nodes_.empty()) fail(out, proc, "{} nodes left after release", proc.nodes_.size());
  if (!proc.todo_.empty()) fail(out, proc, "{} work items queued after release", proc.todo_.size());
  if (!proc.delivered_death_.empty())
    fail(out, proc, "{} delivered deaths left after release", proc.delivered_death_.size());
  if (proc.outstanding_txns_ != 0)
    fail(out, proc, "{} outstanding transactions after release", proc.outstanding_txns_);
  return out;
}

// The holder's counts of a node's refs are read under the node lock alone: the checker runs with
// no request inside core (see the header), so no other thread writes them.
void InvariantChecker::check_refs(const Proc& proc,
                                  Violations& out) CUSED_NO_THREAD_SAFETY_ANALYSIS {
  sync::LockGuard guard(proc.outer_lock_);
  if (proc.refs_.indexed_by_node() != proc.refs_.size())
    fail(out, proc, "{} refs by desc but {} by node (S6.1)", proc.refs_.size(),
         proc.refs_.indexed_by_node());
  for (const auto& [desc, ref] : proc.refs_.by_desc()) {
    if (ref->desc != desc) fail(out, proc, "ref {} filed under desc {}", ref->desc, desc);
    if (proc.refs_.find(*ref->node) != ref.get())
      fail(out, proc, "ref {} missing from the by-node index (S6.1)", desc);
    if (ref->strong == 0 && ref->weak == 0)
      fail(out, proc, "ref {} kept with no strong or weak count (S6.1)", desc);
    if (&ref->proc != &proc) fail(out, proc, "ref {} names another proc as holder", desc);
    sync::LockGuard node_guard(ref->node->lock);
    // A manager stays desc 0 for its holders after it dies (S6.2, S11.5).
    if (desc == 0 && !ref->node->is_context_manager && ref->node->proc)
      fail(out, proc, "desc 0 names node {}, not the context manager (S6.2)", ref->node->debug_id);
    if (!ref->node_entry.is_linked())
      fail(out, proc, "ref {} not on node {}'s ref list", desc, ref->node->debug_id);
  }
}

void InvariantChecker::check_nodes(const Proc& proc,
                                   Violations& out) CUSED_NO_THREAD_SAFETY_ANALYSIS {
  std::vector<std::pair<binder_uintptr_t, std::shared_ptr<Node>>> nodes;
  {
    sync::LockGuard guard(proc.inner_lock_);
    nodes.assign(proc.nodes_.begin(), proc.nodes_.end());
  }
  for (const auto& [ptr, node] : nodes) {
    sync::LockGuard guard(node->lock);
    if (node->ptr != ptr) fail(out, proc, "node {} filed under ptr {:#x}", node->debug_id, ptr);
    if (node->proc.get() != &proc)
      fail(out, proc, "node {} in the tree but owned by another proc", node->debug_id);
    if (node->internal_strong_refs < 0 || node->local_strong_refs < 0 || node->local_weak_refs < 0)
      fail(out, proc, "node {} negative count: internal {} local strong {} local weak {} (S6.5)",
           node->debug_id, node->internal_strong_refs, node->local_strong_refs,
           node->local_weak_refs);
    if (node->tmp_refs.load() != 0)
      fail(out, proc, "node {} holds {} driver temporaries between requests", node->debug_id,
           node->tmp_refs.load());
    int strong_refs = 0;
    for (const Ref& ref : node->refs) {
      if (ref.node.get() != node.get())
        fail(out, proc, "node {} lists a ref of another node", node->debug_id);
      if (ref.strong > 0) strong_refs++;
    }
    if (strong_refs != node->internal_strong_refs)
      fail(out, proc, "node {}: {} strong refs but internal_strong_refs {} (S6.5)", node->debug_id,
           strong_refs, node->internal_strong_refs);
  }
}

void InvariantChecker::check_buffers(const Proc& proc, Violations& out,
                                     bool released) CUSED_NO_THREAD_SAFETY_ANALYSIS {
  // The allocator's lock is taken with no proc lock held (core/locks.h).
  std::vector<std::pair<const alloc::Buffer*, bool>> buffers;
  proc.alloc_->for_each_allocated([&](const alloc::Buffer& buffer) {
    buffers.emplace_back(&buffer, buffer.allow_user_free());
  });
  sync::LockGuard guard(proc.inner_lock_);
  if (proc.buffer_states_.size() != buffers.size())
    fail(out, proc, "{} allocated buffers but {} buffer records", buffers.size(),
         proc.buffer_states_.size());
  for (const auto& [buffer, user_owned] : buffers) {
    auto state = proc.buffer_states_.find(buffer);
    if (state == proc.buffer_states_.end()) {
      fail(out, proc, "buffer at {:#x} has no record", buffer->offset());
      continue;
    }
    const bool in_flight = !user_owned && state->second.transaction.lock();
    if (!released && !user_owned && !in_flight)
      fail(out, proc, "buffer at {:#x} owned by nobody: not delivered, no transaction (S9.9)",
           buffer->offset());
    if (const std::size_t files = state->second.files.size(); files && user_owned)
      fail(out, proc, "delivered buffer at {:#x} still holds {} files (S5.6)", buffer->offset(),
           files);
    else if (files && !released && !in_flight)
      fail(out, proc, "buffer at {:#x} holds {} files for no transaction (S5.7)", buffer->offset(),
           files);
  }
  if (proc.outstanding_txns_ < 0)
    fail(out, proc, "outstanding transactions {} < 0", proc.outstanding_txns_);
}

std::size_t InvariantChecker::held_files(const Proc& proc) {
  sync::LockGuard guard(proc.inner_lock_);
  std::size_t held = 0;
  for (const auto& [buffer, state] : proc.buffer_states_) held += state.files.size();
  return held;
}

void InvariantChecker::check_space(const Proc& proc, Violations& out) {
  alloc::AllocatorStats stats = proc.alloc_->stats();
  if (stats.size == 0) return;  // never mapped
  if (stats.allocated_bytes + stats.free_bytes != stats.size)
    fail(out, proc, "allocated {} + free {} bytes != space {} (S9.4)", stats.allocated_bytes,
         stats.free_bytes, stats.size);
  if (stats.free_async_space > stats.size / 2)
    fail(out, proc, "async budget {} above size/2 = {} (S9.6)", stats.free_async_space,
         stats.size / 2);
  if (stats.allocated_buffers == 0 && stats.free_async_space != stats.size / 2)
    fail(out, proc, "no buffer left but async budget {} != size/2 = {} (S11.11)",
         stats.free_async_space, stats.size / 2);
}

}  // namespace cused::core
