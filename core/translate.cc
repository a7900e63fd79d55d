// SPDX-License-Identifier: GPL-2.0-only
// The payload of a transaction (S4.11) and its objects (S5): copied from the sender straight
// into the target's buffer, objects translated on the way, scatter-gather buffers and their
// pointer fixups applied during the copy, so that untranslated sender bytes never appear in the
// target. Everything the engine must trust later (offsets, object types, translated handles) is
// kept in daemon memory (BufferState); the buffer itself is never read back.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "core/align.h"
#include "core/prefetched_memory.h"
#include "core/proc.h"
#include "core/trace_events.h"
#include "core/txn_plan.h"

namespace cused::core {
namespace {

union Object {
  binder_object_header hdr;
  flat_binder_object fbo;
  binder_fd_object fdo;
  binder_buffer_object bbo;
  binder_fd_array_object fdao;
};

std::size_t object_size(std::uint32_t type) {
  switch (type) {
    case BINDER_TYPE_BINDER:
    case BINDER_TYPE_WEAK_BINDER:
    case BINDER_TYPE_HANDLE:
    case BINDER_TYPE_WEAK_HANDLE:
      return sizeof(flat_binder_object);
    case BINDER_TYPE_FD:
      return sizeof(binder_fd_object);
    case BINDER_TYPE_PTR:
      return sizeof(binder_buffer_object);
    case BINDER_TYPE_FDA:
      return sizeof(binder_fd_array_object);
    default:
      return 0;
  }
}

// binder_get_object, from the sender's memory: the size of the valid object at `offset`, or 0
// (S4.11 step 5: 4-aligned, header inside the data, a known type, the whole object inside).
std::size_t read_object(UserMemory& memory, binder_uintptr_t data, binder_size_t data_size,
                        binder_size_t offset, Object& object) {
  object = {};
  if (offset > data_size || offset % sizeof(std::uint32_t)) return 0;
  std::size_t read_size = std::min<binder_size_t>(sizeof(Object), data_size - offset);
  if (read_size < sizeof(binder_object_header)) return 0;
  if (memory.read(data + offset, &object, read_size)) return 0;
  std::size_t size = object_size(object.hdr.type);
  if (!size || data_size < size || offset > data_size - size) return 0;
  return size;
}

}  // namespace

// The state of one translation pass (binder_transaction's locals).
struct Proc::Translation {
  struct Processed {
    binder_size_t offset;
    bool is_ptr;
    binder_buffer_object bbo;        // PTR objects as translated (target addresses)
    binder_uintptr_t sender_buffer;  // and the sender's address of their payload
  };
  struct SgCopy {
    binder_size_t offset;  // in the target buffer
    binder_uintptr_t sender;
    binder_size_t length;
  };
  // A pointer written into a parent's copy, or (skip > 0) an FDA's fd slots left out of the copy
  // and filled at delivery (binder_ptr_fixup).
  struct Fixup {
    binder_size_t offset;  // of the slot in the target buffer
    binder_uintptr_t value;
    binder_size_t skip;
  };

  std::vector<binder_size_t> offsets;
  std::vector<Processed> processed;
  std::vector<SgCopy> copies;
  std::vector<Fixup> fixups;
  binder_size_t sg_offset = 0;
  binder_size_t sg_end = 0;
  binder_size_t last_fixup_obj_off = 0;
  binder_size_t last_fixup_min_off = 0;
  FdRules fd_rules;

  // binder_validate_ptr: the PTR object at offsets[index], if it was processed already.
  const Processed* ptr_at(binder_size_t index, std::size_t num_valid) const {
    if (index >= num_valid || !processed[index].is_ptr) return nullptr;
    return &processed[index];
  }
  const Processed* at_offset(binder_size_t offset) const {
    auto it = std::lower_bound(processed.begin(), processed.end(), offset,
                               [](const Processed& p, binder_size_t o) { return p.offset < o; });
    return it != processed.end() && it->offset == offset ? &*it : nullptr;
  }
  // binder_validate_fixup (S5.5 ordering rule): fixups go into the last PTR or one of its
  // ancestors, at non-decreasing offsets within a parent.
  bool fixup_allowed(binder_size_t parent_obj_offset, binder_size_t fixup_offset) const {
    binder_size_t last_obj = last_fixup_obj_off;
    binder_size_t last_min = last_fixup_min_off;
    if (!last_obj) return false;
    while (last_obj != parent_obj_offset) {
      const Processed* last = at_offset(last_obj);
      if (!last || !last->is_ptr || !(last->bbo.flags & BINDER_BUFFER_FLAG_HAS_PARENT))
        return false;
      last_min = last->bbo.parent_offset + sizeof(binder_uintptr_t);
      last_obj = offsets[last->bbo.parent];
    }
    return fixup_offset >= last_min;
  }
  void add_fixup(binder_size_t offset, binder_uintptr_t value, binder_size_t skip = 0) {
    auto it = std::upper_bound(fixups.begin(), fixups.end(), offset,
                               [](binder_size_t o, const Fixup& f) { return o < f.offset; });
    fixups.insert(it, Fixup{offset, value, skip});
  }
};

TxnError Proc::translate_objects(Thread& thread, UserMemory& sender_memory,
                                 const binder_transaction_data& tr, TxnPlan& plan) {
  Proc& target = *plan.target_proc;
  alloc::Buffer& buffer = *plan.buffer;
  std::byte* contents = target.alloc_->contents(buffer).data();
  const binder_uintptr_t user_data = tr.data.ptr.buffer;
  const binder_size_t data_size = tr.data_size;
  const binder_size_t off_start = align8(data_size);

  Translation x;
  x.offsets.resize(align8(tr.offsets_size) / sizeof(binder_size_t));
  // The offsets and the data in one gathered read (into the daemon and straight into the target
  // buffer); the steps below then take their pieces from there. What cannot be read whole here is
  // read again piece by piece, so a fault still fails the step the kernel would fail.
  PrefetchedMemory payload(sender_memory);
  const UserRange whole_payload[] = {{tr.data.ptr.offsets, x.offsets.data(), tr.offsets_size},
                                     {user_data, contents, data_size}};
  payload.prefetch(whole_payload);
  UserMemory& memory = payload;
  // S4.11 steps 1-3. The offsets are read into daemon memory, then copied to the target.
  if (tr.offsets_size) {
    if (memory.read(tr.data.ptr.offsets, x.offsets.data(), tr.offsets_size))
      return {BR_FAILED_REPLY, -EFAULT};
    std::memcpy(contents + off_start, x.offsets.data(), tr.offsets_size);
  }
  if (tr.offsets_size % sizeof(binder_size_t)) return {BR_FAILED_REPLY, -EINVAL};
  if (buffer.extra_buffers_size() % sizeof(std::uint64_t)) return {BR_FAILED_REPLY, -EINVAL};
  x.sg_offset = align8(off_start + tr.offsets_size);
  x.sg_end = x.sg_offset + buffer.extra_buffers_size() - align8(plan.secctx.size());
  x.fd_rules = {plan.in_reply_to ? (plan.in_reply_to->flags & TF_ACCEPT_FDS) != 0
                                 : plan.target_node->accept_fds,
                plan.sender_files, target.receives_files_.load(std::memory_order_relaxed),
                plan.t->debug_id};
  const binder_uintptr_t target_base = target.alloc_->user_address(buffer);

  // Step 6: one object, translated in place.
  auto translate = [&](Object& object, std::size_t index, binder_size_t object_offset) {
    switch (object.hdr.type) {
      case BINDER_TYPE_BINDER:
      case BINDER_TYPE_WEAK_BINDER:
        return translate_binder(thread, object.fbo, target, plan.state, plan.t->debug_id);
      case BINDER_TYPE_HANDLE:
      case BINDER_TYPE_WEAK_HANDLE:
        return translate_handle(object.fbo, target, plan.state, plan.t->debug_id);
      case BINDER_TYPE_FD:
        return translate_fd_object(object.fdo, object_offset, x, plan.state);
      case BINDER_TYPE_FDA:
        return translate_fd_array(memory, object.fdao, x, index, target_base, plan.state);
      case BINDER_TYPE_PTR:
        return translate_ptr(object.bbo, x, index, target_base);
      default:
        return -EINVAL;  // read_object accepts only the seven types
    }
  };

  binder_size_t user_offset = 0;
  for (std::size_t index = 0; index < x.offsets.size(); index++) {
    const binder_size_t object_offset = x.offsets[index];
    // Step 4: the raw bytes up to this object; objects must ascend without overlap.
    if (object_offset != user_offset &&
        (user_offset > object_offset || object_offset > data_size ||
         memory.read(user_data + user_offset, contents + user_offset, object_offset - user_offset)))
      return {BR_FAILED_REPLY, -EFAULT};
    // Step 5: the object, from the sender.
    Object object;
    std::size_t size = read_object(memory, user_data, data_size, object_offset, object);
    if (!size || object_offset < user_offset) return {BR_FAILED_REPLY, -EINVAL};
    user_offset = object_offset + size;
    x.processed.push_back({object_offset, false, {}, 0});
    if (int ret = translate(object, index, object_offset)) return {BR_FAILED_REPLY, ret};
    std::memcpy(contents + object_offset, &object, size);
  }
  // Step 7: the rest of the data.
  if (memory.read(user_data + user_offset, contents + user_offset, data_size - user_offset))
    return {BR_FAILED_REPLY, -EFAULT};
  // Step 8: scatter-gather payloads with their fixups (binder_do_deferred_txn_copies).
  if (int ret = copy_sg_buffers(memory, x, contents)) return {BR_FAILED_REPLY, ret};
  return {};
}

// S5.1: the sender exports one of its own objects; the target gets a handle to it.
int Proc::translate_binder(Thread& thread, flat_binder_object& fp, Proc& target, BufferState& state,
                           int txn_id) {
  NodeTmpRef node = get_node(fp.binder);
  if (!node) node = new_node(&fp);
  if (fp.cookie != node->cookie) return -EINVAL;
  const bool strong = fp.hdr.type == BINDER_TYPE_BINDER;
  RefData dest;
  // The first reference makes BR_INCREFS/BR_ACQUIRE for the sender, on the sending thread.
  if (int ret = target.inc_ref_for_node(*node, strong, &thread, dest)) return ret;
  fp.hdr.type = strong ? BINDER_TYPE_HANDLE : BINDER_TYPE_WEAK_HANDLE;
  fp.binder = 0;
  fp.handle = dest.desc;
  fp.cookie = 0;
  trace::emit(TraceEventType::kNodeToRef, txn_id, node->debug_id, node->ptr, dest.debug_id,
              dest.desc);
  state.objects.push_back({ObjectRecord::Kind::kHandle, strong, dest.desc, nullptr});
  return 0;
}

// S5.2: the sender passes one of its handles. Coming home it becomes the target's own object;
// elsewhere the target gets its own handle (also to a dead node).
int Proc::translate_handle(flat_binder_object& fp, Proc& target, BufferState& state, int txn_id) {
  const bool strong = fp.hdr.type == BINDER_TYPE_HANDLE;
  RefData src;
  NodeTmpRef node = get_node_from_ref(fp.handle, strong, nullptr, nullptr, &src);
  if (!node) return -EINVAL;
  Node& n = *node;
  {
    NodeInnerGuard guard(n);
    if (guard.owner() == &target) {
      fp.hdr.type = strong ? BINDER_TYPE_BINDER : BINDER_TYPE_WEAK_BINDER;
      fp.binder = n.ptr;
      fp.cookie = n.cookie;
      // No BR_INCREFS/BR_ACQUIRE for this (S6.5); the kernel ignores the result too.
      inc_node_nilocked(n, strong, false, nullptr);
      trace::emit(TraceEventType::kRefToNode, txn_id, src.debug_id, src.desc, n.debug_id, n.ptr);
      state.objects.push_back({ObjectRecord::Kind::kNode, strong, 0, node.shared()});
      return 0;
    }
  }
  RefData dest;
  if (int ret = target.inc_ref_for_node(n, strong, nullptr, dest)) return ret;
  fp.binder = 0;
  fp.handle = dest.desc;
  fp.cookie = 0;
  trace::emit(TraceEventType::kRefToRef, txn_id, n.debug_id, src.debug_id, src.desc, dest.debug_id,
              dest.desc);
  state.objects.push_back({ObjectRecord::Kind::kHandle, strong, dest.desc, nullptr});
  return 0;
}

// S5.3: the sender's file is held now; its fd in the target is chosen at delivery (S5.6), and
// until then the target sees 0 in the 8-byte fd field (cookie and pad_flags pass unchanged).
int Proc::translate_fd_object(binder_fd_object& fdo, binder_size_t object_offset,
                              const Translation& x, BufferState& state) {
  const std::uint32_t fd = fdo.fd;
  fdo.pad_binder = 0;
  return take_file(fd, object_offset + offsetof(binder_fd_object, fd), false, x.fd_rules, state);
}

// S5.4: the parent must be a PTR processed already, within the ordering rule, and big enough.
// Each fd is read from the sender's copy of the parent and taken as an FD object's is; the array's
// slots in the target's copy are skipped by the sg copy and filled at delivery.
int Proc::translate_fd_array(UserMemory& memory, const binder_fd_array_object& fda, Translation& x,
                             std::size_t index, binder_uintptr_t target_base, BufferState& state) {
  const Translation::Processed* parent = x.ptr_at(fda.parent, index);
  if (!parent || !x.fixup_allowed(parent->offset, fda.parent_offset)) return -EINVAL;
  x.last_fixup_obj_off = parent->offset;
  x.last_fixup_min_off = fda.parent_offset + sizeof(std::uint32_t) * fda.num_fds;
  if (fda.num_fds == 0) return 0;  // S11.15
  if (fda.num_fds >= SIZE_MAX / sizeof(std::uint32_t)) return -EINVAL;
  const binder_size_t fd_buf_size = sizeof(std::uint32_t) * fda.num_fds;
  if (fd_buf_size > parent->bbo.length || fda.parent_offset > parent->bbo.length - fd_buf_size)
    return -EINVAL;
  // The kernel reads the sender's parent object again for the array's sender address; the copy
  // held for the payload now has the translated object there, so the address is the one recorded
  // when the parent was translated.
  const binder_uintptr_t sender_fds = parent->sender_buffer + fda.parent_offset;
  const binder_size_t fda_offset = parent->bbo.buffer - target_base + fda.parent_offset;
  if (fda_offset % sizeof(std::uint32_t) || sender_fds % sizeof(std::uint32_t)) return -EINVAL;
  x.add_fixup(fda_offset, 0, fd_buf_size);
  // The whole array in one read; where that faults, fd by fd, so that the failure comes after the
  // fds before it were taken, where the kernel's copy_from_user of that fd fails.
  std::vector<std::uint32_t> fds(fda.num_fds);
  const bool whole = memory.read(sender_fds, fds.data(), fd_buf_size) == 0;
  for (binder_size_t i = 0; i < fda.num_fds; i++) {
    const binder_uintptr_t at = sender_fds + i * sizeof(std::uint32_t);
    if (!whole && memory.read(at, &fds[i], sizeof fds[i])) return -EINVAL;
    if (int ret =
            take_file(fds[i], fda_offset + i * sizeof(std::uint32_t), true, x.fd_rules, state))
      return ret;
  }
  return 0;
}

// S5.5: the payload goes to the next slot of the sg area, the object points there, and a child
// patches its pointer into its parent's copy.
int Proc::translate_ptr(binder_buffer_object& bp, Translation& x, std::size_t index,
                        binder_uintptr_t target_base) {
  if (bp.length > x.sg_end - x.sg_offset) return -EINVAL;
  x.copies.push_back({x.sg_offset, bp.buffer, bp.length});
  bp.buffer = target_base + x.sg_offset;
  x.sg_offset += align8(bp.length);
  if (bp.flags & BINDER_BUFFER_FLAG_HAS_PARENT) {
    const Translation::Processed* parent = x.ptr_at(bp.parent, index);
    if (!parent || !x.fixup_allowed(parent->offset, bp.parent_offset)) return -EINVAL;
    if (parent->bbo.length < sizeof(binder_uintptr_t) ||
        bp.parent_offset > parent->bbo.length - sizeof(binder_uintptr_t))
      return -EINVAL;
    x.add_fixup(bp.parent_offset + parent->bbo.buffer - target_base, bp.buffer);
  }
  x.processed[index].is_ptr = true;
  x.processed[index].bbo = bp;
  x.processed[index].sender_buffer = x.copies.back().sender;
  x.last_fixup_obj_off = x.processed[index].offset;
  x.last_fixup_min_off = 0;
  return 0;
}

// binder_do_deferred_txn_copies: each sg payload is copied up to the next fixup, the fixup is
// written instead of the sender's bytes, and the copy resumes after it.
int Proc::copy_sg_buffers(UserMemory& memory, const Translation& x, std::byte* contents) {
  auto fixup = x.fixups.begin();
  bool failed = false;
  for (const auto& copy : x.copies) {
    binder_size_t done = 0;
    while (done < copy.length) {
      const binder_size_t offset = copy.offset + done;
      const binder_size_t left = copy.length - done;
      binder_size_t chunk =
          fixup != x.fixups.end() ? std::min<binder_size_t>(left, fixup->offset - offset) : left;
      if (!failed && chunk) failed = memory.read(copy.sender + done, contents + offset, chunk) != 0;
      done += chunk;
      if (chunk == left) break;
      if (fixup->skip) {
        done += fixup->skip;  // an FDA's slots: written in the target's context (S5.6)
      } else {
        if (!failed) std::memcpy(contents + fixup->offset, &fixup->value, sizeof fixup->value);
        done += sizeof fixup->value;
      }
      ++fixup;
    }
  }
  return failed ? -EINVAL : 0;
}

// S5.8: what the buffer's transaction took is given back; the buffer's owner runs this. FD objects
// need nothing (a delivered fd is the receiver's; an undelivered file goes with the record), FDA
// fds are closed in the freeing caller.
void Proc::release_objects(Thread* thread, BufferState& state, CallerFiles* closer) {
  if (state.target_node) dec_node(*state.target_node, true, false);
  close_array_fds(thread, state.array_fds, closer);
  for (const ObjectRecord& object : state.objects) {
    if (object.kind == ObjectRecord::Kind::kNode)
      dec_node(*object.node, object.strong, false);
    else
      update_ref_for_handle(object.handle, false, object.strong, nullptr);
  }
  state = {};
}

// binder_free_buf: BC_FREE_BUFFER, or a buffer the engine gives up. A oneway's buffer going
// releases the next oneway queued on its node (S4.5).
void Proc::free_buffer(Thread* thread, alloc::Buffer& buffer, CallerFiles* closer) {
  BufferState state;
  std::shared_ptr<Transaction> user;  // dropped after the locks
  {
    sync::LockGuard guard(inner_lock_);
    state = take_buffer_state(buffer);
    if ((user = state.transaction.lock())) {
      sync::LockGuard txn_guard(user->lock);
      user->buffer = nullptr;
    }
  }
  if (buffer.async_transaction() && state.target_node) {
    Node& node = *state.target_node;
    NodeInnerGuard guard(node);
    if (guard.owner() == this) {
      assume_inner_locked();
      if (DequeuedWork next = node.async_todo.pop_front()) {
        todo_.push_back(*next);
        wakeup_proc();
      } else {
        node.has_async_transaction = false;
      }
    }
  }
  alloc::trace_buffer(TraceEventType::kBufferRelease, buffer);
  release_objects(thread, state, closer);
  alloc_->free_buffer(buffer);
}

}  // namespace cused::core
