// SPDX-License-Identifier: GPL-2.0-only
// ioctl dispatch (S2, binder_ioctl) and the ioctls that are not BINDER_WRITE_READ.
#include <cerrno>
#include <cstring>

#include "core/proc.h"
#include "core/trace_events.h"
#include "core/wake.h"

namespace cused::core {
namespace {

template <typename T>
std::span<const std::byte> bytes_of(const T& value) {
  return std::as_bytes(std::span<const T, 1>(&value, 1));
}

// The argument as FUSE copied it in (restricted ioctls pass it by value).
template <typename T>
bool read_arg(std::span<const std::byte> arg, T& out) {
  if (arg.size() < sizeof(T)) return false;
  std::memcpy(&out, arg.data(), sizeof(T));
  return true;
}

}  // namespace

void Proc::ioctl(const IoctlRequest& request, std::unique_ptr<Completion> completion) {
  trace::TaskScope task({request.tid, request.pid});
  trace::emit(TraceEventType::kIoctl, request.cmd, request.arg_address);
  // S1.3: the fd is usable only by the opener's thread group (the Rust driver's rule).
  if (request.pid != pid_) {
    trace::emit(TraceEventType::kIoctlDone, -EINVAL);
    return completion->complete(-EINVAL, {});
  }
  // A frontend that reaches the caller's file table can install fds in it from now on.
  if (completion->caller_files() && !receives_files_.load(std::memory_order_relaxed))
    receives_files_.store(true, std::memory_order_relaxed);
  auto self = shared_from_this();
  WakeScope scope(request.tid);
  // S2.0: every ioctl runs as a binder thread of the caller's tid. A released proc has none.
  auto thread = get_thread(request.tid);
  if (!thread) return scope.answer(std::move(completion), -EBADF, {});

  long result = 0;
  std::span<const std::byte> out;
  binder_version version{static_cast<__s32>(uapi::kProtocolVersion)};
  binder_node_info_for_ref ref_info{};
  binder_node_debug_info debug_info{};
  binder_extended_error ee{};
  binder_frozen_status_info frozen_info{};
  switch (request.cmd) {
    case BINDER_WRITE_READ:
      return write_read(thread, request, std::move(completion));
    case BINDER_SET_MAX_THREADS: {
      std::uint32_t max = 0;
      if (!read_arg(request.arg, max)) {
        result = -EINVAL;  // S2.2: a copy failure is EINVAL here
        break;
      }
      sync::LockGuard guard(inner_lock_);
      max_threads_ = max;
      break;
    }
    case BINDER_SET_CONTEXT_MGR_EXT: {
      flat_binder_object fbo{};
      result = read_arg(request.arg, fbo) ? set_context_mgr(request, &fbo) : -EINVAL;
      break;
    }
    case BINDER_SET_CONTEXT_MGR:
      result = set_context_mgr(request, nullptr);
      break;
    case BINDER_THREAD_EXIT:
      // S2.6: the thread is gone, so there is no need_return to clear.
      release_thread(thread);
      return scope.answer(std::move(completion), 0, {});
    case BINDER_VERSION:
      out = bytes_of(version);
      break;
    case BINDER_GET_NODE_INFO_FOR_REF:
      result = read_arg(request.arg, ref_info) ? get_node_info_for_ref(ref_info) : -EFAULT;
      if (result == 0) out = bytes_of(ref_info);
      break;
    case BINDER_GET_NODE_DEBUG_INFO:
      result = read_arg(request.arg, debug_info) ? get_node_debug_info(debug_info) : -EFAULT;
      if (result == 0) out = bytes_of(debug_info);
      break;
    case BINDER_ENABLE_ONEWAY_SPAM_DETECTION: {
      std::uint32_t enable = 0;
      if (!read_arg(request.arg, enable)) {
        result = -EFAULT;
        break;
      }
      sync::LockGuard guard(inner_lock_);
      oneway_spam_detection_enabled_ = enable != 0;
      break;
    }
    case BINDER_FREEZE:
      return freeze_ioctl(thread, request, std::move(completion));
    case BINDER_GET_FROZEN_INFO:
      result = read_arg(request.arg, frozen_info) ? get_frozen_info(frozen_info) : -EFAULT;
      if (result == 0) out = bytes_of(frozen_info);
      break;
    case BINDER_GET_EXTENDED_ERROR:
      ee = take_extended_error(*thread);
      out = bytes_of(ee);
      break;
    default:  // S2.0: unknown codes, SET_IDLE_* included
      result = -EINVAL;
      break;
  }
  end_ioctl(*thread);
  scope.answer(std::move(completion), result, out);
}

// S2.1: the write half runs to completion (or its first hard error); the read half may park.
void Proc::write_read(const std::shared_ptr<Thread>& thread, const IoctlRequest& request,
                      std::unique_ptr<Completion> completion) {
  binder_write_read bwr{};
  if (!read_arg(request.arg, bwr)) {
    end_ioctl(*thread);
    return WakeScope::current().answer(std::move(completion), -EFAULT, {});
  }
  if (bwr.write_size > 0) {
    int ret = write_commands(*thread, completion->user_memory(), request.read_ahead,
                             completion->caller_files(), bwr, request.euid);
    trace::emit(TraceEventType::kWriteDone, ret);
    if (ret < 0) {
      bwr.read_consumed = 0;
      end_ioctl(*thread);
      return WakeScope::current().answer(std::move(completion), ret, bytes_of(bwr));
    }
  }
  if (bwr.read_size > 0) {
    auto read = new_read(*thread);
    read->completion = std::move(completion);
    read->bwr = bwr;
    read->nonblock = request.nonblock;
    return start_read(thread, std::move(read));
  }
  end_ioctl(*thread);
  WakeScope::current().answer(std::move(completion), 0, bytes_of(bwr));
}

void Proc::end_ioctl(Thread& thread) {
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  thread.need_return = false;
}

// S2.3 / S2.4: the caller's proc becomes the device's context manager.
int Proc::set_context_mgr(const IoctlRequest& request, const flat_binder_object* fbo) {
  sync::LockGuard guard(context_.lock);
  if (context_.manager) return -EBUSY;
  if (context_.manager_uid && *context_.manager_uid != request.euid) return -EPERM;
  context_.manager_uid = request.euid;
  NodeTmpRef node = new_node(fbo);
  Node& manager = *node;
  {
    // Pinned: userspace is considered to hold both references already, so no BR_INCREFS or
    // BR_ACQUIRE is ever sent for the manager node.
    sync::LockGuard node_guard(manager.lock);
    manager.local_weak_refs++;
    manager.local_strong_refs++;
    manager.has_strong_ref = true;
    manager.has_weak_ref = true;
  }
  manager.is_context_manager = true;
  context_.manager = node.shared();
  return 0;
}

// S2.8: the first node of this proc with a ptr above the given one.
int Proc::get_node_debug_info(binder_node_debug_info& info) {
  const binder_uintptr_t after = info.ptr;
  info = {};
  std::shared_ptr<Node> node;
  {
    sync::LockGuard guard(inner_lock_);
    auto it = nodes_.upper_bound(after);
    if (it == nodes_.end()) return 0;
    node = it->second;
  }
  sync::LockGuard guard(node->lock);
  info.ptr = node->ptr;
  info.cookie = node->cookie;
  info.has_strong_ref = node->has_strong_ref;
  info.has_weak_ref = node->has_weak_ref;
  return 0;
}

// S2.9: only the context manager may ask, and only about a strong handle.
int Proc::get_node_info_for_ref(binder_node_info_for_ref& info) {
  if (info.strong_count || info.weak_count || info.reserved1 || info.reserved2 || info.reserved3)
    return -EINVAL;
  {
    sync::LockGuard guard(context_.lock);
    if (!context_.manager || node_owner(*context_.manager).get() != this) return -EPERM;
  }
  NodeTmpRef node = get_node_from_ref(info.handle, true);
  if (!node) return -EINVAL;
  Node& found = *node;
  sync::LockGuard guard(found.lock);
  info.strong_count = found.local_strong_refs + found.internal_strong_refs;
  info.weak_count = found.local_weak_refs;
  return 0;
}

// S2.14: the record is reset even when the copy-out fails.
binder_extended_error Proc::take_extended_error(Thread& thread) {
  sync::LockGuard guard(inner_lock_);
  assume_locked(thread);
  return std::exchange(thread.ee, binder_extended_error{0, BR_OK, 0});
}

}  // namespace cused::core
